/**
 * Where the limits of `rateLimits` in config/gateway.yaml apply, answered 429 `rate-limited` with
 * `retry-after` (seconds):
 *
 * - per principal (`perPrincipal`): chat and job calls. The hit goes out alongside the token lookup once the
 *   token's principal is known (as the job lookup does, stages/identify.ts), so it costs no round trip of
 *   its own; `limitPrincipal` then reads its verdict (or asks, for a token's first call).
 * - per client address (`perAddress`): public routes, which need no token (`limitAddress`).
 * - failed authentication attempts per client address (`failedAuthPerAddress`): a request whose token is
 *   refused (401 `invalid-token`) counts one; past the limit the address is answered 429 before any token
 *   is looked at, until the window slides. Only failures reach the store, so valid traffic pays nothing;
 *   an address found over the limit is remembered here until its retry time, so a guesser costs no store
 *   call either, and every instance learns of it from the shared count at its next failure.
 *
 * The client address is the peer's (Koa's `ctx.ip` with `proxy: false`). Behind a reverse proxy every
 * client shares the proxy's address: set `rateLimits.addressHeader` to the header the proxy writes
 * (`x-forwarded-for`: its last entry is the one the proxy appended, the only one it vouches for).
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import type { RuntimeHolder } from '../config/reloader.js';
import type { RateLimitSettings } from '../config/types.js';
import type { Call } from '../stages/call.js';
import { metrics } from '../observe/metrics.js';
import type { RateLimiter, Verdict } from './limiter.js';

export const RATE_WINDOW_MS = 60_000;

function settings(holder: RuntimeHolder): RateLimitSettings {
  return holder.current.gateway.rateLimits ?? {};
}

function refuse(ctx: Context, limit: string, what: string, v: Verdict): never {
  const seconds = Math.max(1, Math.ceil(v.retryAfterMs / 1000));
  ctx.set('retry-after', String(seconds));
  metrics.rateLimited.inc({ limit });
  throw new GatewayError('rate-limited', `too many ${what}; retry after ${seconds} s`);
}

export function clientAddress(ctx: Context, holder: RuntimeHolder): string {
  const header = settings(holder).addressHeader;
  if (header) {
    const last = ctx.get(header).split(',').pop()?.trim();
    if (last) return last;
  }
  return ctx.ip || ctx.socket.remoteAddress || 'unknown';
}

const ahead = new WeakMap<Call, { principalId: string; verdict: Promise<Verdict> }>();

/** For identify's `alongside`: starts the principal's hit in the same write as its token lookup. */
export function principalLimitAhead(limiter: RateLimiter, holder: RuntimeHolder): (call: Call, principalId: string) => void {
  return (call, principalId) => {
    const limit = settings(holder).perPrincipal;
    if (!limit) return;
    const verdict = limiter.hit('principal', principalId, limit, RATE_WINDOW_MS);
    verdict.catch(() => {}); // read (and its failure thrown) by limitPrincipal
    ahead.set(call, { principalId, verdict });
  };
}

/** Stage after identify: the principal's calls per minute. */
export function limitPrincipal(limiter: RateLimiter, holder: RuntimeHolder) {
  return async function limitPrincipal(ctx: Context, next: Next): Promise<void> {
    const limit = settings(holder).perPrincipal;
    const call: Call = ctx.state.call;
    const id = call.identity!.principal.id;
    if (limit) {
      const early = ahead.get(call);
      const verdict = await (early && early.principalId === id ? early.verdict : limiter.hit('principal', id, limit, RATE_WINDOW_MS));
      if (!verdict.allowed) refuse(ctx, 'principal', 'calls for this principal', verdict);
    }
    await next();
  };
}

/** A public route's requests per client address. */
export function limitAddress(limiter: RateLimiter, holder: RuntimeHolder) {
  return async function limitAddress(ctx: Context, next: Next): Promise<void> {
    const limit = settings(holder).perAddress;
    if (limit) {
      const verdict = await limiter.hit('address', clientAddress(ctx, holder), limit, RATE_WINDOW_MS);
      if (!verdict.allowed) refuse(ctx, 'address', 'requests from this address', verdict);
    }
    await next();
  };
}

/** Failed authentication attempts per client address, around everything that checks a token. */
export function limitFailedAuth(limiter: RateLimiter, holder: RuntimeHolder, failures: ReadonlySet<string> = new Set(['invalid-token'])) {
  const blockedUntil = new Map<string, number>();
  return async function limitFailedAuth(ctx: Context, next: Next): Promise<void> {
    const limit = settings(holder).failedAuthPerAddress;
    if (!limit) return next();
    const address = clientAddress(ctx, holder);
    const until = blockedUntil.get(address);
    if (until !== undefined) {
      if (until > Date.now()) refuse(ctx, 'failed-auth', 'failed authentication attempts from this address', { allowed: false, retryAfterMs: until - Date.now() });
      blockedUntil.delete(address);
    }
    try {
      await next();
    } catch (err) {
      if (!(err instanceof GatewayError) || !failures.has(err.code)) throw err;
      const verdict = await limiter.hit('failed-auth', address, limit, RATE_WINDOW_MS);
      if (verdict.allowed) throw err;
      if (blockedUntil.size > 10_000) blockedUntil.clear();
      blockedUntil.set(address, Date.now() + verdict.retryAfterMs);
      refuse(ctx, 'failed-auth', 'failed authentication attempts from this address', verdict);
    }
  };
}
