/**
 * What every wallet sign-in ends with, once its proof has been checked: the nonce is redeemed (once, across
 * every instance), and the account's principal is found, or made on its first sign-in. The nonce is taken
 * only after the signature verified, so a forged attempt cannot burn the nonce of the person it copies.
 */
import { randomUUID } from 'node:crypto';
import type { Runtime } from '../config/compile.js';
import { GatewayError } from '../errors.js';
import type { PrincipalRecord, Store } from '../store/store.js';
import type { ChallengeStore } from '../challenges/store.js';
import { createPrincipal, principalId, requirePrincipal } from '../auth/principals.js';
import type { WalletAccountStore } from './accounts.js';

export interface WalletDeps {
  store: Store;
  runtime(): Runtime;
  challenges: ChallengeStore;
  accounts: WalletAccountStore;
  /** The auth host's public origin: what a message's domain, URI and a CACAO's audience must name. */
  authOrigin: string;
  now(): number;
  /** Called just before a first sign-in makes a principal: the per-address sign-up limit (throws 429). */
  admitSignUp?: () => Promise<void>;
}

/** What a successful wallet sign-in hands to the session that follows it. */
export interface WalletSignIn {
  principal: PrincipalRecord;
  /** The account that signed, EIP-55 checksummed. */
  address: string;
  chainId: number;
  /** True when this sign-in made the principal. */
  created: boolean;
  /** The sign-in method, as the session records it. */
  method: 'siwe' | 'cacao' | 'smart-account';
}

/**
 * Takes the nonce back under the method's kind, once; unknown, used or expired is 400 `challenge-invalid`,
 * the code every ceremony uses.
 */
export async function redeemNonce(w: WalletDeps, kind: 'siwe' | 'smart-account', nonce: string): Promise<void> {
  if (!(await w.challenges.take(kind, nonce, w.now()))) throw new GatewayError('challenge-invalid');
}

/**
 * The principal an account signs in to. The link is claimed before the principal is made, so racing first
 * sign-ins of one account agree on one principal; a link whose principal is missing (a crash between the
 * two writes) is completed by the next sign-in rather than left dangling.
 */
export async function principalForAccount(w: WalletDeps, key: string): Promise<{ principal: PrincipalRecord; created: boolean }> {
  const runtime = w.runtime();
  const id =
    (await w.accounts.owner(key)) ?? (await w.accounts.link(key, principalId(runtime.gateway.principalDomain, randomUUID().replace(/-/g, '').slice(0, 16))));
  const existing = await w.store.getPrincipal(id);
  if (existing) return { principal: existing, created: false };
  const tenant = id.slice(id.lastIndexOf(':tenant:') + ':tenant:'.length);
  // Refused here, the link stays claimed and principal-less: the account's next sign-in completes it.
  await w.admitSignUp?.();
  try {
    return { principal: await createPrincipal(w.store, runtime, { tenant }), created: true };
  } catch (err) {
    if (!(err instanceof GatewayError && err.code === 'principal-exists')) throw err;
    return { principal: await requirePrincipal(w.store, id), created: false };
  }
}
