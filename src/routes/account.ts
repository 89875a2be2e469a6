/**
 * The account token routes (API host, `cookie` only: a person in a browser session manages the tokens
 * their agents use; a PAT cannot mint or revoke PATs — 403 `pat-not-accepted`):
 *   POST /v1/account/api-token         {label} -> 201 {id, label, token}: the token is shown this once
 *   GET  /v1/account/api-tokens        {data: [{id, label, createdAt, lastUsedAt, revokedAt}]}, oldest first,
 *                                      never a token; lastUsedAt is accurate to about a minute (src/token-usage)
 *   POST /v1/account/api-token/revoke  {id} -> {id, label, revokedAt}; another principal's token (or an
 *                                      unknown id) is 404 `token-not-found`; revoking twice keeps the first time
 *   GET  /v1/account/applications      {data: [{id, status, submittedAt, decidedAt, decisionNote,
 *                                      verificationMode, policyVersion, scope}]}, oldest first: the caller's own
 *                                      research applications and where each stands (the console lists them)
 * Same format, hashing and revocation as the operator's (auth/principals.ts): a revoked token answers 401
 * `token-revoked` on every instance from the next request.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import { jsonBody } from '../auth/schemas.js';
import { resolveCaller, SESSION_ONLY } from '../auth/caller.js';
import { issueToken, revokeToken } from '../auth/principals.js';
import type { Deps } from '../app/deps.js';

export function issueAccountToken(deps: Deps) {
  return async function issueAccountToken(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    const { label } = await jsonBody<{ label: string }>(ctx, deps.holder.current.gateway.limits.bodyBytes, 'issueToken');
    ctx.status = 201;
    ctx.set('cache-control', 'no-store');
    ctx.body = await issueToken(deps.store, caller.principal.id, label);
  };
}

export function listAccountTokens(deps: Deps) {
  return async function listAccountTokens(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    const tokens = await deps.store.listTokens(caller.principal.id);
    const used = await deps.tokenUsage.store.lastUsed(tokens.map((t) => t.id));
    ctx.body = { data: tokens.map((t, i) => ({ id: t.id, label: t.label, createdAt: t.createdAt, lastUsedAt: used[i] ?? null, revokedAt: t.revokedAt })) };
  };
}

/**
 * The caller's own applications, as the console shows them: what was asked for and where it stands. The
 * purpose and targets stay out (the person wrote them; an operator reads them in the admin API), and an
 * application is found only by its principal, so another account's never appears here.
 */
export function listAccountApplications(deps: Deps) {
  return async function listAccountApplications(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    const apps = await deps.billing.applicationsOf(caller.principal.id);
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      data: apps.map((a) => ({
        id: a.id,
        status: a.status,
        submittedAt: a.submittedAt,
        decidedAt: a.decidedAt,
        decisionNote: a.decisionNote,
        verificationMode: a.request.verificationMode,
        policyVersion: a.request.policyVersion,
        scope: a.request.scope,
      })),
    };
  };
}

export function revokeAccountToken(deps: Deps) {
  return async function revokeAccountToken(ctx: Context): Promise<void> {
    const caller = await resolveCaller(ctx, deps, SESSION_ONLY);
    const { id } = await jsonBody<{ id: string }>(ctx, deps.holder.current.gateway.limits.bodyBytes, 'revokeToken');
    // Ownership first: another principal's token id is answered exactly like an unknown one.
    const own = (await deps.store.listTokens(caller.principal.id)).find((t) => t.id === id);
    if (!own) throw new GatewayError('token-not-found');
    const t = await revokeToken(deps.store, id);
    ctx.body = { id: t.id, label: t.label, revokedAt: t.revokedAt };
  };
}
