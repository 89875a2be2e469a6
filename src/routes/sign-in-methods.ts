/**
 * GET /v1/account/sign-in-methods (auth host, `cookie`): the signed-in principal's own sign-in methods, for
 * the console's Security page: its passkeys (credential id, added, last used — never the public key), its
 * wallets (account id, address, chain for a smart account, the methods it signs in with), whether TOTP
 * is on, and the identity-provider identity that names the account (not a sign-in method). Only the principal's own; a PAT answers 403 `pat-not-accepted`.
 */
import type { Context } from 'koa';
import { resolveCaller, SESSION_ONLY } from '../auth/caller.js';
import type { Deps } from '../app/deps.js';
import { walletsOf } from './account-methods.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type SignInMethodsDeps = Pick<Deps, 'identityLinks' | 'passkeys' | 'sessions' | 'store' | 'totp' | 'walletAccounts'>;

export function signInMethods(deps: SignInMethodsDeps) {
  return async function signInMethods(ctx: Context): Promise<void> {
    const { principal } = await resolveCaller(ctx, deps, SESSION_ONLY);
    const [passkeys, totp, wallets, identityProvider] = await Promise.all([
      deps.passkeys.list(principal.id),
      deps.totp.get(principal.id),
      walletsOf(deps, principal.id),
      deps.identityLinks.linkOf(principal.id),
    ]);
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      principalId: principal.id,
      passkeys: passkeys.map((p) => ({ id: p.id, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt })),
      wallets,
      totp: totp?.state === 'active',
      identityProvider,
    };
  };
}
