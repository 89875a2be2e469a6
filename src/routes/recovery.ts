/**
 * Account recovery, on the auth host, for a person who lost every sign-in method. What proves the account
 * is theirs: a recovery phrase (its key, derived on their side — src/recovery/phrase.ts; the server keeps
 * only the public key) AND the offline one-time secret shown at set-up; and then time: the recovery
 * completes no sooner than `recovery.delayHours` (at least 48) after it starts, and any sign-in of the
 * account, or any request of one of its sessions, ends it meanwhile (Sessions.onOwnerActs, wired in
 * server.ts). Completing it still owes the TOTP code where one is enrolled (a recovery code will do).
 * No operator route opens a sign-in for a user.
 *
 *   POST /v1/recovery/setup     {publicKey} (signed in) -> {recoverySecret}: shown once; replaces any
 *                               earlier key and secret
 *   GET  /v1/recovery           (signed in, pending-2fa too) -> {setUp, pending: {id, startedAt,
 *                               completesAt} | null, cancelled: {id, startedAt, cancelledAt, by} | null}:
 *                               `cancelled` tells the owner a recovery was ended by their own sign-in
 *   POST /v1/recovery/challenge {} -> {challenge}: for the phrase's key to sign (single-use)
 *   POST /v1/recovery/start     {publicKey, challenge, signature, recoverySecret} -> 202 {recoveryId,
 *                               completesAt}; the secret is used up
 *   POST /v1/recovery/complete  {publicKey, challenge, signature} -> {verified, principalId, username} and a
 *                               session (add a new passkey with it), once the delay has passed
 *   POST /v1/recovery/cancel    (any session of the account, pending-2fa too) -> {cancelled}
 *
 * Refusals of start and complete say nothing about whether a key exists (401 `recovery-rejected`).
 */
import type { Context } from 'koa';
import { createPublicKey, randomBytes, randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import { jsonBody } from '../auth/schemas.js';
import { resolveCaller, SESSION_ONLY, signInAnswer, startSession } from '../auth/caller.js';
import { requirePrincipal } from '../auth/principals.js';
import { recoveryMessage, verifyRecoverySignature } from '../recovery/signature.js';
import { hashRecoverySecret, newRecoverySecret } from '../recovery/secret.js';
import type { SessionRecord } from '../sessions/store.js';
import type { Deps } from '../app/deps.js';
import { requestChallenges } from '../challenges/ceremony.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type RecoveryRouteDeps = Pick<Deps, 'challenges' | 'holder' | 'log' | 'now' | 'origins' | 'recovery' | 'sessions' | 'store'>;

const KIND = 'recovery';
const limit = (deps: RecoveryRouteDeps) => deps.holder.current.gateway.limits.bodyBytes;

/** Any live session of the account, pending-2fa included: a primary sign-in is enough to cancel or look. */
async function anySession(ctx: Context, deps: RecoveryRouteDeps): Promise<SessionRecord & { endedRecovery: boolean }> {
  if (ctx.get('authorization')) throw new GatewayError('pat-not-accepted');
  if (!deps.sessions.hasCookie(ctx)) throw new GatewayError('session-required');
  deps.sessions.requireSameOrigin(ctx);
  const found = await deps.sessions.read(ctx);
  if (found.kind !== 'live') throw new GatewayError('session-ended');
  return { ...found.session, endedRecovery: found.ownerActed };
}

/** The proof that the phrase is held: a fresh challenge of ours, signed by the phrase's key. */
async function provePhrase(ctx: Context, deps: RecoveryRouteDeps, b: { publicKey: string; challenge: string; signature: string }) {
  if (!(await requestChallenges(ctx, deps.challenges).take(KIND, b.challenge, deps.now()))) throw new GatewayError('challenge-invalid');
  const key = await deps.recovery.byPublicKey(b.publicKey);
  const signed = verifyRecoverySignature(b.publicKey, recoveryMessage(new URL(deps.origins.auth).origin, b.challenge), b.signature);
  if (!key || !signed) throw new GatewayError('recovery-rejected');
  return key;
}

export function recoverySetup(deps: RecoveryRouteDeps) {
  return async function recoverySetup(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    const { publicKey } = await jsonBody<{ publicKey: string }>(ctx, limit(deps), 'recoverySetup');
    if (!isEd25519(publicKey)) throw new GatewayError('invalid-request', 'publicKey is not an Ed25519 public key');
    const holder = await deps.recovery.byPublicKey(publicKey);
    if (holder && holder.principalId !== caller.principal.id) throw new GatewayError('invalid-request', 'publicKey is in use; derive it from a new phrase');
    const secret = newRecoverySecret();
    await deps.recovery.setUp({
      principalId: caller.principal.id,
      publicKey,
      secretHash: hashRecoverySecret(secret),
      createdAt: new Date(deps.now()).toISOString(),
    });
    ctx.set('cache-control', 'no-store');
    ctx.body = { recoverySecret: secret };
  };
}

/** A raw Ed25519 public key node:crypto accepts (32 bytes, base64url). */
function isEd25519(publicKey: string): boolean {
  try {
    createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    return Buffer.from(publicKey, 'base64url').length === 32;
  } catch {
    return false;
  }
}

export function recoveryStatus(deps: RecoveryRouteDeps) {
  return async function recoveryStatus(ctx: Context): Promise<void> {
    const session = await anySession(ctx, deps);
    const [key, pending, cancelled] = await Promise.all([
      deps.recovery.keyOf(session.principalId),
      deps.recovery.pending(session.principalId),
      deps.recovery.lastCancelled(session.principalId),
    ]);
    const iso = (ms: number) => new Date(ms).toISOString();
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      setUp: key !== null && key.secretHash !== null,
      pending: pending && { id: pending.id, startedAt: iso(pending.startedAt), completesAt: iso(pending.completesAt) },
      cancelled: cancelled && { id: cancelled.id, startedAt: iso(cancelled.startedAt), cancelledAt: iso(cancelled.cancelledAt), by: cancelled.by },
    };
  };
}

export function recoveryChallenge(deps: RecoveryRouteDeps) {
  return async function recoveryChallenge(ctx: Context): Promise<void> {
    await jsonBody(ctx, limit(deps), 'empty');
    const challenge = randomBytes(32).toString('base64url');
    await deps.challenges.put(KIND, challenge, { data: {}, expiresAt: deps.now() + deps.holder.current.gateway.recovery.challengeMs }, deps.now());
    ctx.set('cache-control', 'no-store');
    ctx.body = { challenge };
  };
}

export function recoveryStart(deps: RecoveryRouteDeps) {
  return async function recoveryStart(ctx: Context): Promise<void> {
    const b = await jsonBody<{ publicKey: string; challenge: string; signature: string; recoverySecret: string }>(ctx, limit(deps), 'recoveryStart');
    const key = await provePhrase(ctx, deps, b);
    const now = deps.now();
    const recovery = {
      id: randomUUID(),
      principalId: key.principalId,
      startedAt: now,
      completesAt: now + deps.holder.current.gateway.recovery.delayHours * 3_600_000,
    };
    const result = await deps.recovery.start(recovery, hashRecoverySecret(b.recoverySecret));
    if (result === 'secret-invalid') throw new GatewayError('recovery-rejected');
    if (result === 'pending') throw new GatewayError('recovery-pending');
    deps.log.info('recovery.started', { principal: key.principalId, recovery: recovery.id, completesAt: new Date(recovery.completesAt).toISOString() });
    ctx.status = 202;
    ctx.body = { recoveryId: recovery.id, completesAt: new Date(recovery.completesAt).toISOString() };
  };
}

export function recoveryComplete(deps: RecoveryRouteDeps) {
  return async function recoveryComplete(ctx: Context): Promise<void> {
    const b = await jsonBody<{ publicKey: string; challenge: string; signature: string }>(ctx, limit(deps), 'recoveryComplete');
    const key = await provePhrase(ctx, deps, b);
    const pending = await deps.recovery.pending(key.principalId);
    if (!pending) throw new GatewayError('recovery-rejected');
    if (deps.now() < pending.completesAt)
      throw new GatewayError('recovery-not-ready', `the recovery completes no sooner than ${new Date(pending.completesAt).toISOString()}`);
    // Closing is the atomic step: of two completions racing, one wins.
    if (!(await deps.recovery.end(key.principalId, pending.id))) throw new GatewayError('recovery-rejected');
    const principal = await requirePrincipal(deps.store, key.principalId);
    // The recovery replaces the lost primary methods, not the second factor: where TOTP is enrolled the
    // session owes its code (or a recovery code) like any primary sign-in.
    const session = await startSession(ctx, deps, principal.id, 'recovery');
    deps.log.info('recovery.completed', { principal: principal.id, recovery: pending.id });
    ctx.set('cache-control', 'no-store');
    ctx.body = signInAnswer(principal, session);
  };
}

export function recoveryCancel(deps: RecoveryRouteDeps) {
  return async function recoveryCancel(ctx: Context): Promise<void> {
    const session = await anySession(ctx, deps);
    await jsonBody(ctx, limit(deps), 'empty');
    // Reading the session above already ended a pending recovery (the owner acted): that is this answer.
    const ended = session.endedRecovery || (await deps.recovery.cancel(session.principalId, 'cancel', deps.now())) !== null;
    ctx.body = { cancelled: ended };
  };
}
