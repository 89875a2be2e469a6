/**
 * A person's browser against a test gateway: a cookie jar (the session cookie the gateway sets, sent back
 * to every host of localhost — cookies do not isolate by port), and the `Origin` a browser sends with a
 * POST (the origin of the page that made it: the console's by default).
 */
import { randomBytes } from 'node:crypto';
import type { TestGateway } from './gateway.js';
import type { HostName } from '../../src/config/types.js';
import { hashSessionId, SESSION_PREFIX } from '../../src/sessions/sessions.js';

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

export class Browser {
  readonly gw: TestGateway;
  cookie: string | null = null;
  /** The page the requests come from; null sends no Origin (as curl does). */
  origin: string | null;

  constructor(gw: TestGateway, origin: string | null = gw.origins.console) {
    this.gw = gw;
    this.origin = origin;
  }

  async request(host: HostName, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const name = this.gw.holder.current.gateway.sessions.cookieName;
    const res = await fetch(`${this.gw.urls[host]}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(this.cookie ? { cookie: `${name}=${this.cookie}` } : {}),
        ...(method === 'POST' && this.origin ? { origin: this.origin } : {}),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    for (const line of res.headers.getSetCookie()) {
      const m = new RegExp(`^${name}=([^;]*)`).exec(line);
      if (m) this.cookie = m[1] || null;
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  get(host: HostName, path: string, headers?: Record<string, string>): Promise<Answer> {
    return this.request(host, 'GET', path, undefined, headers);
  }

  post(host: HostName, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> {
    return this.request(host, 'POST', path, body ?? {}, headers);
  }

  /**
   * Puts a live session for `principalId` straight into the gateway's session store, as a sign-in would,
   * and holds its cookie: for suites about what a session may do rather than how one is obtained (the
   * sign-in suites obtain theirs through real ceremonies).
   */
  async seedSession(principalId: string, method = 'test'): Promise<void> {
    const id = SESSION_PREFIX + randomBytes(32).toString('base64url');
    const now = this.gw.sessions.now();
    const { idleMs, absoluteMs } = this.gw.holder.current.gateway.sessions;
    await this.gw.sessions.store.create(
      { hash: hashSessionId(id), principalId, method, state: 'active', createdAt: now, lastSeenAt: now, expiresAt: now + absoluteMs },
      idleMs,
    );
    this.cookie = id;
  }
}
