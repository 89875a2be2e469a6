/**
 * TOTP as a second factor, on the auth host (all cookie routes, same-origin POSTs):
 *
 *   POST /v1/totp/enrol          {} -> {secret, uri}: starts (or restarts) an enrolment for the signed-in
 *                                principal; the uri is what an authenticator app reads. 409
 *                                `totp-already-enrolled` when enrolled.
 *   POST /v1/totp/enrol/confirm  {code} -> {enrolled: true, recoveryCodes: [...]}: the first code proves
 *                                the app holds the secret; the recovery codes are shown this once.
 *   POST /v1/totp/verify         {code} or {recoveryCode} with a pending-2fa session (after a primary
 *                                sign-in) -> {verified: true, principalId, username[, recoveryCodesLeft]}:
 *                                the session becomes active with its full lifetime.
 *
 * A code works once: its time step, and every earlier one, is refused afterwards (401 `totp-code-reused`).
 * Wrong codes (and reused ones) count per principal: at `totp.maxAttempts` within `totp.lockoutMs` every
 * code is refused (429 `totp-locked`, with retry-after) and the pending sign-in is ended.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { jsonBody } from '../auth/schemas.js';
import { resolveCaller, SESSION_ONLY, signInAnswer } from '../auth/caller.js';
import { requirePrincipal } from '../auth/principals.js';
import { enrolmentUri, hashRecoveryCode, matchStep, newRecoveryCodes, newSecret } from '../totp/codes.js';
import type { SessionRecord } from '../sessions/store.js';
import type { Deps } from '../app/deps.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type TotpRouteDeps = Pick<Deps, 'holder' | 'now' | 'sessions' | 'store' | 'totp'>;

const body = (ctx: Context, deps: TotpRouteDeps, name: 'empty' | 'totpConfirm' | 'totpVerify') =>
  jsonBody<{ code?: string; recoveryCode?: string }>(ctx, deps.holder.current.gateway.limits.bodyBytes, name);

/** Counts a wrong code; at the limit, ends the pending sign-in and answers 429. */
async function wrongCode(ctx: Context, deps: TotpRouteDeps, principalId: string, err: GatewayError, pending?: SessionRecord): Promise<never> {
  const cfg = deps.holder.current.gateway.totp;
  const n = await deps.totp.failure(principalId, deps.now(), cfg.lockoutMs);
  if (n >= cfg.maxAttempts) {
    if (pending) {
      await deps.sessions.end(pending);
      await deps.sessions.clearCookie(ctx);
    }
    ctx.set('retry-after', String(Math.ceil(cfg.lockoutMs / 1000)));
    throw new GatewayError('totp-locked');
  }
  throw err;
}

async function refuseWhileLocked(ctx: Context, deps: TotpRouteDeps, principalId: string): Promise<void> {
  const cfg = deps.holder.current.gateway.totp;
  if ((await deps.totp.failures(principalId, deps.now())) >= cfg.maxAttempts) {
    ctx.set('retry-after', String(Math.ceil(cfg.lockoutMs / 1000)));
    throw new GatewayError('totp-locked');
  }
}

export function totpEnrol(deps: TotpRouteDeps) {
  return async function totpEnrol(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    await body(ctx, deps, 'empty');
    const secret = newSecret();
    const begun = await deps.totp.begin({
      principalId: caller.principal.id,
      secret,
      state: 'pending',
      lastStep: -1,
      createdAt: new Date(deps.now()).toISOString(),
    });
    if (!begun) throw new GatewayError('totp-already-enrolled');
    ctx.set('cache-control', 'no-store');
    ctx.body = { secret, uri: enrolmentUri(deps.holder.current.gateway.totp.issuer, caller.principal.username, secret) };
  };
}

export function totpConfirm(deps: TotpRouteDeps) {
  return async function totpConfirm(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    const { code } = await body(ctx, deps, 'totpConfirm');
    const pid = caller.principal.id;
    const record = await deps.totp.get(pid);
    if (!record || record.state !== 'pending') throw new GatewayError('totp-not-pending', 'no enrolment was started: POST /v1/totp/enrol first');
    await refuseWhileLocked(ctx, deps, pid);
    const cfg = deps.holder.current.gateway.totp;
    const step = matchStep(record.secret, code!, deps.now(), cfg.window);
    if (step === null) return wrongCode(ctx, deps, pid, new GatewayError('totp-code-invalid'));
    const codes = newRecoveryCodes(cfg.recoveryCodes);
    if (!(await deps.totp.activate(pid, step, codes.map(hashRecoveryCode)))) throw new GatewayError('totp-not-pending');
    await deps.totp.clearFailures(pid);
    ctx.set('cache-control', 'no-store');
    ctx.body = { enrolled: true, recoveryCodes: codes };
  };
}

export function totpVerify(deps: TotpRouteDeps) {
  return async function totpVerify(ctx: Context): Promise<void> {
    if (!deps.sessions.hasCookie(ctx)) throw new GatewayError('session-required', 'sign in first; then give the code');
    deps.sessions.requireSameOrigin(ctx);
    const given = await body(ctx, deps, 'totpVerify');
    const found = await deps.sessions.read(ctx);
    if (found.kind !== 'live') throw new GatewayError('session-ended');
    const session = found.session;
    if (session.state !== 'pending-2fa') throw new GatewayError('totp-not-pending');
    const pid = session.principalId;
    const record = await deps.totp.get(pid);
    if (!record || record.state !== 'active') throw new GatewayError('totp-not-pending');
    await refuseWhileLocked(ctx, deps, pid);
    let left: number | undefined;
    if (given.code !== undefined) {
      const step = matchStep(record.secret, given.code, deps.now(), deps.holder.current.gateway.totp.window);
      if (step === null) return wrongCode(ctx, deps, pid, new GatewayError('totp-code-invalid'), session);
      if (!(await deps.totp.useStep(pid, step))) return wrongCode(ctx, deps, pid, new GatewayError('totp-code-reused'), session);
    } else {
      if (!(await deps.totp.useRecoveryCode(pid, hashRecoveryCode(given.recoveryCode!)))) {
        return wrongCode(ctx, deps, pid, new GatewayError('totp-code-invalid', 'the recovery code is wrong or was used'), session);
      }
      left = await deps.totp.recoveryCodesLeft(pid);
    }
    await deps.totp.clearFailures(pid);
    if (!(await deps.sessions.activate(session))) throw new GatewayError('session-ended');
    const principal = await requirePrincipal(deps.store, pid);
    ctx.set('cache-control', 'no-store');
    ctx.body = { ...signInAnswer(principal, { ...session, state: 'active' }), ...(left === undefined ? {} : { recoveryCodesLeft: left }) };
  };
}
