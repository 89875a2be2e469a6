/**
 * A signed-in principal changes its own sign-in methods (auth host, `cookie`; every POST same-origin, like
 * all of the host's):
 *
 *   POST /v1/account/wallets/siwe     {message, signature}  a SIWE message signed by the key to add
 *   POST /v1/account/wallets/cacao    {cacao}               a CACAO of the key to add
 *   POST /v1/account/sign-in-methods/remove   {passkey: <credential id>} or {wallet: <account id>}
 *
 * Adding a passkey is the registration ceremony with the session (routes/passkey.ts). A wallet is added by
 * proving the key exactly as a sign-in does (the server's nonce, this host as domain, the signature), and
 * is then linked to the signed-in principal: from then on it signs in to it. A key that already signs in
 * to another principal is not moved (409 `wallet-linked-elsewhere`); the same principal's again is a no-op.
 *
 * Removal never takes the last method: a principal keeps at least one passkey or wallet (409
 * `last-sign-in-method`). Removals of one principal's methods take turns under a short lock in the store
 * (on every instance), so of two racing for the last two methods one stands and the other is refused.
 * Passkeys and wallets live in two stores, so the count is still checked again after the removal, and a
 * removal that went to zero (only possible when the lock could not be had in time) is put back and refused:
 * the principal ends with at least one method either way. Sessions already open stay open.
 */
import type { Context } from 'koa';
import type { Hex } from 'viem';
import { setTimeout as sleep } from 'node:timers/promises';
import { GatewayError } from '../errors.js';
import { resolveCaller, SESSION_ONLY } from '../auth/caller.js';
import { jsonBody } from '../auth/schemas.js';
import type { Deps } from '../app/deps.js';
import { requestChallenges } from '../challenges/ceremony.js';
import { methodsOf } from '../wallet/accounts.js';
import { signInMethods, walletDeps } from './wallet.js';
import type { WalletDeps } from '../wallet/sign-in.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type AccountMethodsDeps = Pick<Deps, 'challenges' | 'holder' | 'now' | 'origins' | 'passkeys' | 'sessions' | 'store' | 'walletAccounts'>;

/** The principal's wallet accounts, as the account routes show them. */
export async function walletsOf(
  deps: Pick<Deps, 'walletAccounts'>,
  principalId: string,
): Promise<Array<{ id: string; address: string; chainId: number | null; methods: string[] }>> {
  const keys = await deps.walletAccounts.accountsOf(principalId);
  return keys.map((key) => {
    const parts = key.split(':');
    return { id: key, address: parts[parts.length - 1]!, chainId: parts[0] === 'sca' ? Number(parts[1]) : null, methods: methodsOf(key) };
  });
}

async function methodCount(deps: Pick<Deps, 'passkeys' | 'walletAccounts'>, principalId: string): Promise<number> {
  const [passkeys, wallets] = await Promise.all([deps.passkeys.list(principalId), deps.walletAccounts.accountsOf(principalId)]);
  return passkeys.length + wallets.length;
}

export function addWallet(deps: AccountMethodsDeps, kind: 'siwe' | 'cacao') {
  const w = walletDeps(deps);
  const inRequest = (ctx: Context): WalletDeps => ({ ...w, challenges: requestChallenges(ctx, deps.challenges) });
  return async function addWallet(ctx: Context): Promise<void> {
    const { principal } = await resolveCaller(ctx, deps, SESSION_ONLY);
    const limit = deps.holder.current.gateway.limits.bodyBytes;
    const methods = await signInMethods();
    const proof =
      kind === 'siwe'
        ? await methods.proveSiwe(inRequest(ctx), await jsonBody<{ message: string; signature: Hex }>(ctx, limit, 'signedMessage'))
        : await methods.proveCacao(inRequest(ctx), await jsonBody<{ cacao: string }>(ctx, limit, 'cacaoSession'));
    const owner = (await deps.walletAccounts.owner(proof.key)) ?? (await deps.walletAccounts.link(proof.key, principal.id));
    if (owner !== principal.id) throw new GatewayError('wallet-linked-elsewhere');
    ctx.set('cache-control', 'no-store');
    ctx.body = { linked: true, id: proof.key, address: proof.address, methods: methodsOf(proof.key), wallets: await walletsOf(deps, principal.id) };
  };
}

/** How long a removal holds the principal's lock at most (it lapses then), and waits for it at most. */
const LOCK_TTL_MS = 5_000;
const LOCK_WAIT_MS = 2_000;

/**
 * Runs `fn` holding the lock on the principal's sign-in methods, waiting for another removal to finish.
 * Should the lock not come within LOCK_WAIT_MS, `fn` runs anyway: its own check after the removal still
 * keeps the last method.
 */
async function underMethodsLock<T>(deps: AccountMethodsDeps, principalId: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let token = await deps.passkeys.lockMethods(principalId, LOCK_TTL_MS);
  for (let delay = 5; token === null && Date.now() < deadline; delay = Math.min(delay * 2, 100)) {
    await sleep(delay);
    token = await deps.passkeys.lockMethods(principalId, LOCK_TTL_MS);
  }
  try {
    return await fn();
  } finally {
    if (token !== null) await deps.passkeys.unlockMethods(principalId, token).catch(() => undefined);
  }
}

export function removeMethod(deps: AccountMethodsDeps) {
  return async function removeMethod(ctx: Context): Promise<void> {
    const { principal } = await resolveCaller(ctx, deps, SESSION_ONLY);
    const body = await jsonBody<{ passkey?: string; wallet?: string }>(ctx, deps.holder.current.gateway.limits.bodyBytes, 'removeSignInMethod');
    await underMethodsLock(deps, principal.id, () => remove(deps, principal.id, body));
    const id = principal.id;
    const passkeys = await deps.passkeys.list(id);
    ctx.set('cache-control', 'no-store');
    ctx.body = {
      removed: true,
      passkeys: passkeys.map((p) => ({ id: p.id, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt })),
      wallets: await walletsOf(deps, id),
    };
  };
}

/** Removes one method of the principal's, never the last. */
async function remove(deps: AccountMethodsDeps, id: string, body: { passkey?: string; wallet?: string }): Promise<void> {
  if (body.passkey !== undefined) {
    const record = await deps.passkeys.get(body.passkey);
    if (!record || record.principalId !== id) throw new GatewayError('sign-in-method-not-found');
    if ((await methodCount(deps, id)) <= 1) throw new GatewayError('last-sign-in-method');
    if (!(await deps.passkeys.remove(record.id, id))) throw new GatewayError('sign-in-method-not-found');
    if ((await methodCount(deps, id)) === 0) {
      await deps.passkeys.add(record);
      throw new GatewayError('last-sign-in-method');
    }
  } else {
    const key = body.wallet!;
    if ((await deps.walletAccounts.owner(key)) !== id) throw new GatewayError('sign-in-method-not-found');
    if ((await methodCount(deps, id)) <= 1) throw new GatewayError('last-sign-in-method');
    if (!(await deps.walletAccounts.unlink(key, id))) throw new GatewayError('sign-in-method-not-found');
    if ((await methodCount(deps, id)) === 0) {
      await deps.walletAccounts.link(key, id);
      throw new GatewayError('last-sign-in-method');
    }
  }
}
