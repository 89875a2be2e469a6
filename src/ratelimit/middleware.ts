/**
 * Where the limits of `rateLimits` in config/gateway.yaml apply, answered 429 `rate-limited` with
 * `retry-after` (seconds):
 *
 * - per principal (`perPrincipal`): chat and job calls. The hit goes out with the token lookup once the
 *   token's principal is known (`principalHit`, started by src/stages/look-ahead.ts as the job lookup is),
 *   so it costs no round trip of its own; `limitPrincipal` then reads its verdict on the call (or asks, for
 *   a token's first call).
 * - per client address (`perAddress`): public routes, which need no token (`limitAddress`).
 * - per client address, for what a stranger can make the gateway do or keep (`limitPerAddress`, counted on
 *   the address's subject: an IPv6 address's /64, subject.ts): requests to the MCP hosts (`mcpPerAddress`),
 *   sign-in challenges and nonces (`challengesPerAddress`), large static answers (`staticPerAddress`) and
 *   new accounts (`signUpsPerAddressHour`, an hour's window, checked just before an account is made).
 * - failed authentication attempts per client address (`failedAuthPerAddress`), on every listener: an
 *   answer refusing a credential (FAILED_AUTH_CODES: a PAT, the operator token, a passkey, a TOTP code, a
 *   recovery secret) counts one; past the limit the address is answered 429 before its app runs, until
 *   the window slides. Only failures reach the store, so valid traffic pays nothing; an address found over
 *   the limit is remembered here until its retry time, so a guesser costs no store call either, and every
 *   instance learns of it from the shared count at its next failure.
 *
 * The client address is the peer's (Koa's `ctx.ip` with `proxy: false`). Behind a reverse proxy every
 * client shares the proxy's address: set `rateLimits.addressHeader` to the header the proxy writes
 * (`x-forwarded-for`: its last entry is the one the proxy appended, the only one it vouches for).
 */
import type { Context, Next } from 'koa';
import { GatewayError, toWire } from '../errors.js';
import type { RuntimeHolder } from '../config/reloader.js';
import type { RateLimitSettings } from '../config/types.js';
import type { Call } from '../call/call.js';
import { metrics } from '../observe/metrics.js';
import type { RateLimiter, Verdict } from './limiter.js';
import { addressSubject } from './subject.js';

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

/** The principal's hit, started ahead of identify (src/stages/look-ahead.ts); undefined when no per-principal limit is set. */
export function principalHit(limiter: RateLimiter, holder: RuntimeHolder): (principalId: string) => Promise<Verdict> | undefined {
  return (principalId) => {
    const limit = settings(holder).perPrincipal;
    if (!limit) return undefined;
    const verdict = limiter.hit('principal', principalId, limit, RATE_WINDOW_MS);
    verdict.catch(() => {}); // read (and its failure thrown) by limitPrincipal
    return verdict;
  };
}

/** Stage after identify: the principal's calls per minute. */
export function limitPrincipal(limiter: RateLimiter, holder: RuntimeHolder) {
  return async function limitPrincipal(ctx: Context, next: Next): Promise<void> {
    const limit = settings(holder).perPrincipal;
    const call = ctx.state.call as Call;
    const id = call.identity!.principal.id;
    if (limit) {
      const early = call.ahead;
      const verdict = await (early?.limit && early.principalId === id ? early.limit : limiter.hit('principal', id, limit, RATE_WINDOW_MS));
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

/** The address-keyed limits of `limitPerAddress`: the config key, the counter's name, what is counted, its window. */
export interface AddressLimit {
  key: 'mcpPerAddress' | 'challengesPerAddress' | 'staticPerAddress' | 'signUpsPerAddressHour';
  name: string;
  what: string;
  windowMs: number;
}

export const MCP_LIMIT: AddressLimit = { key: 'mcpPerAddress', name: 'mcp', what: 'MCP requests from this address', windowMs: RATE_WINDOW_MS };
export const CHALLENGE_LIMIT: AddressLimit = {
  key: 'challengesPerAddress',
  name: 'challenge',
  what: 'sign-in challenges and nonces for this address',
  windowMs: RATE_WINDOW_MS,
};
export const STATIC_LIMIT: AddressLimit = { key: 'staticPerAddress', name: 'static', what: 'large documents for this address', windowMs: RATE_WINDOW_MS };
export const SIGN_UP_LIMIT: AddressLimit = { key: 'signUpsPerAddressHour', name: 'sign-up', what: 'new accounts from this address', windowMs: 3_600_000 };

/** Research applications per account per day: what one account can make the store keep. */
export const APPLICATION_LIMIT: SubjectLimit = {
  key: 'applicationsPerAccountDay',
  name: 'application',
  what: 'research applications from this account',
  windowMs: 86_400_000,
};

/** A limit on something other than an address: the config key, the counter's name, what is counted, its window. */
export interface SubjectLimit {
  key: 'applicationsPerAccountDay';
  name: string;
  what: string;
  windowMs: number;
}

/** Counts one against `subject` under the limit; 429 `rate-limited` past it. */
export async function hitSubject(ctx: Context, limiter: RateLimiter, holder: RuntimeHolder, l: AddressLimit | SubjectLimit, subject: string): Promise<void> {
  const limit = settings(holder)[l.key];
  if (!limit) return;
  const verdict = await limiter.hit(l.name, subject, limit, l.windowMs);
  if (!verdict.allowed) refuse(ctx, l.name, l.what, verdict);
}

/** Counts one against the limit for the request's address subject; 429 `rate-limited` past it. */
export function hitAddress(ctx: Context, limiter: RateLimiter, holder: RuntimeHolder, l: AddressLimit): Promise<void> {
  return hitSubject(ctx, limiter, holder, l, addressSubject(clientAddress(ctx, holder)));
}

/** Middleware form of hitAddress, ahead of a route. */
export function limitPerAddress(limiter: RateLimiter, holder: RuntimeHolder, l: AddressLimit) {
  return async function limitPerAddress(ctx: Context, next: Next): Promise<void> {
    await hitAddress(ctx, limiter, holder, l);
    await next();
  };
}

/**
 * The error codes that mean "a credential was presented and it was wrong": a refused PAT, a wrong operator
 * token, a passkey assertion, TOTP code or recovery secret that does not verify. Not `unauthenticated` or an
 * ended session: a signed-out browser asking again is not guessing. A sign-in method that adds a failure
 * code adds it here.
 */
export const FAILED_AUTH_CODES: ReadonlySet<string> = new Set([
  'invalid-token',
  'token-revoked',
  'admin-unauthorized',
  'passkey-rejected',
  'passkey-unknown',
  'passkey-replayed',
  'totp-code-invalid',
  'totp-code-reused',
  'recovery-rejected',
]);

function rateLimitedAnswer(ctx: Context, limit: string, what: string, v: Verdict): void {
  try {
    refuse(ctx, limit, what, v);
  } catch (err) {
    ctx.status = (err as GatewayError).status;
    ctx.type = 'application/json';
    ctx.body = toWire(err as GatewayError);
  }
}

/**
 * Failed authentication attempts per client address, on every listener (src/http/listener.ts puts it ahead
 * of each app): an answer carrying one of FAILED_AUTH_CODES counts one; past the limit that answer becomes
 * 429, and the address is refused before its app runs until the window slides. It reads the finished answer
 * rather than the error, so it needs nothing from the apps and covers the API, the sign-in host and the
 * operator plane alike. Only failures reach the store.
 */
export function limitFailedAuth(limiter: RateLimiter, holder: RuntimeHolder, failures: ReadonlySet<string> = FAILED_AUTH_CODES) {
  const blockedUntil = new Map<string, number>();
  const what = 'failed authentication attempts from this address';
  return async function limitFailedAuth(ctx: Context, next: Next): Promise<void> {
    const limit = settings(holder).failedAuthPerAddress;
    if (!limit) {
      await next();
      return;
    }
    const address = clientAddress(ctx, holder);
    const until = blockedUntil.get(address);
    if (until !== undefined) {
      if (until > Date.now()) return rateLimitedAnswer(ctx, 'failed-auth', what, { allowed: false, retryAfterMs: until - Date.now() });
      blockedUntil.delete(address);
    }
    await next();
    const code = (ctx.body as { error?: { code?: unknown } } | undefined)?.error?.code;
    if (typeof code !== 'string' || !failures.has(code) || ctx.headerSent) return;
    // A store that cannot count leaves the refusal as it is: the attempt was refused anyway.
    const verdict = await limiter.hit('failed-auth', address, limit, RATE_WINDOW_MS).catch(() => null);
    if (!verdict || verdict.allowed) return;
    if (blockedUntil.size > 10_000) blockedUntil.clear();
    blockedUntil.set(address, Date.now() + verdict.retryAfterMs);
    rateLimitedAnswer(ctx, 'failed-auth', what, verdict);
  };
}
