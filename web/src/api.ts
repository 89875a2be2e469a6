/**
 * The pages' one way to the server: JSON over fetch to the documented API and sign-in routes, with the
 * browser session cookie (credentials: 'include', since the console calls the API and auth hosts on their
 * own origins). Errors arrive as the gateway's `{error:{code,message}}` and are thrown as ApiError, so a
 * page shows the server's message and never guesses one.
 */
export type HostName = 'api' | 'auth' | 'console' | 'site';
export type Origins = Record<HostName, string>;

/** The deployment's public origins, written into each page's <meta name="portcullis-origins"> when served. */
export function origins(): Origins {
  const meta = document.querySelector<HTMLMetaElement>('meta[name="portcullis-origins"]');
  return JSON.parse(meta?.content ?? '{}') as Origins;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function call<T = unknown>(host: HostName, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${origins()[host]}${path}`, {
    method,
    credentials: 'include',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const err = (parsed as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(res.status, err?.code ?? 'http-error', err?.message ?? `the server answered ${res.status}`);
  }
  return parsed as T;
}

/**
 * Where to go after signing in: `return` only when it is an address on one of this deployment's origins
 * (never an open redirect), else the console.
 */
export function safeReturn(candidate: string | null): string {
  const all = origins();
  if (candidate) {
    try {
      const url = new URL(candidate);
      if (Object.values(all).includes(url.origin)) return url.href;
    } catch {
      /* not a URL: fall through to the console */
    }
  }
  return `${all.console}/`;
}
