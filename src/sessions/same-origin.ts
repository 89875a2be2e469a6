/**
 * Cookie-authenticated requests that change something are same-origin only: a browser attaches the
 * session cookie to a cross-site form POST too (SameSite=Lax stops only some), so the request must prove
 * where it comes from. `Origin` must be one of the configured auth, console or API origins; without an
 * `Origin`, `Sec-Fetch-Site: same-origin` is accepted; with neither, the request is refused. A PAT never
 * needs this: a browser never attaches one on its own.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { HostName } from '../config/types.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function trustedOrigins(origins: Record<HostName, string>): Set<string> {
  return new Set((['auth', 'console', 'api'] as const).map((h) => new URL(origins[h]).origin));
}

/** Throws 403 `cross-site-request` when an unsafe request does not come from a trusted origin. */
export function requireSameOrigin(ctx: Context, trusted: Set<string>): void {
  if (SAFE.has(ctx.method)) return;
  const origin = ctx.get('origin');
  if (origin) {
    if (trusted.has(origin)) return;
    throw new GatewayError('cross-site-request');
  }
  if (ctx.get('sec-fetch-site') === 'same-origin') return;
  throw new GatewayError('cross-site-request', 'a cookie-authenticated POST must carry an Origin header naming the console, API or sign-in origin');
}
