/**
 * The session cookie, exactly as the interface pins it: `HttpOnly`, `SameSite=Lax`, `Path=/`; `Secure` unless
 * the auth origin (the host that sets it) is plain-http localhost; `Domain` = the registrable parent domain
 * shared by the auth, console and API hosts when they have one (computed with the Public Suffix List, so
 * `example.co.uk` is a parent and `co.uk` never is, nor a platform domain such as `fly.dev` or `github.io`
 * from the list's private section), none for `localhost` or an IP — a host-only cookie,
 * which browsers send to every port of that host. The name comes from `sessions.cookieName`.
 *
 * Cookies do not isolate by port, so on localhost the cookie the auth host (8081) sets is sent to the API
 * (8080) and the console (8082) without a Domain.
 */
import type { HostName } from '../config/types.js';

export interface CookiePolicy {
  name: string;
  secure: boolean;
  domain: string | null;
}

const LOOPBACK = /^(localhost|.+\.localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/** What the origins alone decide: `Secure`, and the `Domain` the three hosts share (or none). */
export type CookieScope = Omit<CookiePolicy, 'name'>;

/**
 * The scope of the cookie for these origins. The Public Suffix List (tldts, about 1 MiB of heap once loaded)
 * is imported here, by the first cookie a process sets, not at start: a gateway whose callers only use
 * PATs never loads it (src/sessions/sessions.ts computes this once per process).
 */
export async function cookieScope(origins: Record<HostName, string>): Promise<CookieScope> {
  const { getDomain } = await import('tldts');
  const auth = new URL(origins.auth);
  const secure = !(auth.protocol === 'http:' && LOOPBACK.test(auth.hostname));
  // The list's private section too: on a platform domain (fly.dev, github.io) every customer's subdomain is a
  // site of its own, and a cookie scoped to the platform would be refused by browsers or sent to strangers.
  const parents = (['auth', 'console', 'api'] as const).map((h) => getDomain(new URL(origins[h]).hostname, { allowPrivateDomains: true }));
  const domain = parents[0] && parents.every((d) => d === parents[0]) ? parents[0] : null;
  return { secure, domain };
}

export async function cookiePolicy(name: string, origins: Record<HostName, string>): Promise<CookiePolicy> {
  return { name, ...(await cookieScope(origins)) };
}

/** A Set-Cookie value carrying `value` for `maxAgeMs` (0 clears the cookie). */
export function setCookie(policy: CookiePolicy, value: string, maxAgeMs: number): string {
  const parts = [`${policy.name}=${value}`, 'Path=/', `Max-Age=${Math.max(0, Math.floor(maxAgeMs / 1000))}`, 'HttpOnly', 'SameSite=Lax'];
  if (policy.secure) parts.push('Secure');
  if (policy.domain) parts.push(`Domain=${policy.domain}`);
  return parts.join('; ');
}
