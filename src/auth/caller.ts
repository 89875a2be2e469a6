/**
 * Who is calling: the one seam every route that needs a principal goes through, and the one a sign-in
 * route calls to start a session. Other capabilities (billing, wallet sign-in, console) use only what is
 * exported here; it is kept small and stable.
 *
 *   resolveCaller(ctx, deps, PAT_OR_SESSION)           for a `pat / cookie` route; SESSION_ONLY for a `cookie`
 *       -> { principal, via: 'pat' | 'session', tokenId?, session? }   route
 *   startSession(ctx, deps, principalId, method)       after a successful primary sign-in: stores a new
 *                                                      session and sets the cookie on the answer; `method`
 *                                                      names the sign-in (`passkey`, `siwe`, `cacao`, ...).
 *                                                      When the principal has TOTP enrolled the session is
 *                                                      `pending-2fa` (record.state) until POST /v1/totp/verify;
 *                                                      answer `secondFactor: 'totp'` then (see signInAnswer).
 *
 * Rules, in order (first failure wins):
 *   - `Authorization: Bearer ...` present: on a route that accepts a PAT it is the credential (shape,
 *     checksum, store; 401 `unauthenticated` / `invalid-token` / `token-revoked`); on a session-only route
 *     it is refused, 403 `pat-not-accepted`. A PAT never needs the same-origin check.
 *   - otherwise the session cookie: no cookie is 401 `session-required` on a session-only route and 401
 *     `unauthenticated` where a PAT would do; with a cookie, an unsafe method (POST, ...) must come from
 *     the auth, console or API origin (403 `cross-site-request`); a cookie naming no live session (signed
 *     out here or on any instance, idle or past its absolute end) is 401 `session-ended`; a session still
 *     owing its second factor is 401 `second-factor-required`.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { bearerToken } from '../http/bearer.js';
import { resolveToken } from './token.js';
import type { PrincipalRecord, Store } from '../store/store.js';
import type { Sessions } from '../sessions/sessions.js';
import type { SessionRecord, SessionState } from '../sessions/store.js';
import type { UsageRecorder } from '../token-usage/store.js';

export type Via = 'pat' | 'session';

export interface Caller {
  principal: PrincipalRecord;
  via: Via;
  /** The PAT's id, when via = 'pat'. */
  tokenId?: string;
  /** The live session, when via = 'session'. */
  session?: SessionRecord;
}

/** What resolving a caller needs: the store (principals, tokens) and the sessions. `Deps` has both. */
export interface CallerDeps {
  store: Store;
  sessions: Sessions;
  /** Where a PAT's use is reported for "last used" (optional: without it nothing is reported). */
  tokenUsage?: UsageRecorder;
  now?: () => number;
}

export interface CallerOptions {
  via: readonly Via[];
}

export const PAT_OR_SESSION: CallerOptions = { via: ['pat', 'session'] };
export const SESSION_ONLY: CallerOptions = { via: ['session'] };

export async function resolveCaller(ctx: Context, deps: CallerDeps, opts: CallerOptions): Promise<Caller> {
  const token = bearerToken(ctx);
  if (token !== null || (ctx.get('authorization') && opts.via.includes('pat'))) {
    if (!opts.via.includes('pat')) throw new GatewayError('pat-not-accepted');
    const identity = await resolveToken(deps.store, token);
    deps.tokenUsage?.used(identity.token.id, deps.now?.() ?? Date.now());
    return { principal: identity.principal, via: 'pat', tokenId: identity.token.id };
  }
  if (!opts.via.includes('session')) throw new GatewayError('unauthenticated');
  if (!deps.sessions.hasCookie(ctx)) {
    throw opts.via.includes('pat')
      ? new GatewayError('unauthenticated', 'send a bearer personal access token, or sign in')
      : new GatewayError('session-required');
  }
  // Only a request that carries the cookie can be a forgery riding on it.
  deps.sessions.requireSameOrigin(ctx);
  const found = await deps.sessions.read(ctx);
  if (found.kind === 'none') throw new GatewayError('session-required');
  if (found.kind === 'ended') throw new GatewayError('session-ended');
  if (found.session.state !== 'active') throw new GatewayError('second-factor-required');
  const principal = await deps.store.getPrincipal(found.session.principalId);
  if (!principal) throw new GatewayError('session-ended');
  return { principal, via: 'session', session: found.session };
}

/** Starts a session for `principalId` after a successful sign-in and sets the cookie on the answer. */
export async function startSession(
  ctx: Context,
  deps: Pick<CallerDeps, 'sessions'>,
  principalId: string,
  method: string,
  state?: SessionState,
): Promise<SessionRecord> {
  return deps.sessions.start(ctx, principalId, method, state);
}

/** The answer of a sign-in route: who signed in, and `secondFactor: 'totp'` when a code is still owed. */
export function signInAnswer(principal: PrincipalRecord, session: SessionRecord): Record<string, unknown> {
  return { verified: true, principalId: principal.id, username: principal.username, ...(session.state === 'pending-2fa' ? { secondFactor: 'totp' } : {}) };
}
