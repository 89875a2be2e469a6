/**
 * GET /v1/account/sign-in-methods (auth host, `cookie`): the signed-in principal's own sign-in methods, for
 * the console's Security page: its passkeys (credential id, added, last used — never the public key) and
 * whether TOTP is on. Only the principal's own; a PAT answers 403 `pat-not-accepted`.
 */
import type { Context } from 'koa';
import { resolveCaller, SESSION_ONLY } from '../auth/caller.js';
import type { Deps } from '../app/deps.js';

export function signInMethods(deps: Deps) {
  return async function signInMethods(ctx: Context): Promise<void> {
    const { principal } = await resolveCaller(ctx, deps, SESSION_ONLY);
    const [passkeys, totp] = await Promise.all([deps.passkeys.list(principal.id), deps.totp.get(principal.id)]);
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      principalId: principal.id,
      passkeys: passkeys.map((p) => ({ id: p.id, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt })),
      totp: totp?.state === 'active',
    };
  };
}
