/**
 * The session routes, served on the API host and the auth host alike:
 *   GET  /v1/session          {valid: true, username, principalId} for a live session; {valid: false}
 *                             without one (no cookie, or one that ended — the cookie is then cleared);
 *                             {valid: false, secondFactor: 'totp'} while the sign-in owes its second factor
 *   POST /v1/session/end      signs this session out, on every instance at once: {ended: true|false}
 *   POST /v1/session/end-all  signs out every session of the principal ("sign out everywhere"): {ended: n}
 * All three are `cookie` routes: a Bearer PAT answers 403 `pat-not-accepted`; the POSTs are same-origin
 * only (403 `cross-site-request`).
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { bearerToken } from '../http/bearer.js';
import { jsonBody } from '../auth/schemas.js';
import { resolveCaller, SESSION_ONLY } from '../auth/caller.js';
import type { Deps } from '../app/deps.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type SessionRouteDeps = Pick<Deps, 'holder' | 'sessions' | 'store'>;

function refusePat(ctx: Context): void {
  if (bearerToken(ctx) !== null) throw new GatewayError('pat-not-accepted');
}

export function getSession(deps: SessionRouteDeps) {
  return async function getSession(ctx: Context): Promise<void> {
    refusePat(ctx);
    const found = await deps.sessions.read(ctx);
    ctx.set('cache-control', 'no-store');
    if (found.kind !== 'live') {
      if (found.kind === 'ended') await deps.sessions.clearCookie(ctx);
      ctx.body = { valid: false };
      return;
    }
    if (found.session.state !== 'active') {
      ctx.body = { valid: false, secondFactor: 'totp' };
      return;
    }
    const principal = await deps.store.getPrincipal(found.session.principalId);
    ctx.body = principal ? { valid: true, username: principal.username, principalId: principal.id } : { valid: false };
  };
}

export function endSession(deps: SessionRouteDeps) {
  return async function endSession(ctx: Context): Promise<void> {
    refusePat(ctx);
    deps.sessions.requireSameOrigin(ctx);
    await jsonBody(ctx, deps.holder.current.gateway.limits.bodyBytes, 'empty');
    const found = await deps.sessions.read(ctx);
    // A pending-2fa session is ended too: signing out must work at every step.
    const ended = found.kind === 'live' ? await deps.sessions.end(found.session) : false;
    await deps.sessions.clearCookie(ctx);
    ctx.body = { ended };
  };
}

export function endAllSessions(deps: SessionRouteDeps) {
  return async function endAllSessions(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    await jsonBody(ctx, deps.holder.current.gateway.limits.bodyBytes, 'empty');
    const ended = await deps.sessions.endAll(caller.principal.id);
    await deps.sessions.clearCookie(ctx);
    ctx.body = { ended };
  };
}
