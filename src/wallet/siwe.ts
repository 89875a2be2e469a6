/**
 * Sign-In with Ethereum (EIP-4361) for externally owned accounts: `/v1/siwe/nonce`, `/v1/siwe/options`
 * and `/v1/siwe/verify` on the auth host. The message is parsed and checked by viem's SIWE utilities
 * (message.ts), the signature by viem's `verifyMessage` (EIP-191 recovery; no chain is asked). Nonces are
 * the `siwe` challenges of the store, shared with CACAO, which signs the same kind of message.
 */
import { getAddress, verifyMessage, type Hex } from 'viem';
import { GatewayError } from '../errors.js';
import { newChallenge } from '../challenges/store.js';
import { walletSettings } from './config.js';
import { checkMessage } from './message.js';
import { eoaKey } from './accounts.js';
import { principalForAccount, redeemNonce, type WalletDeps, type WalletSignIn } from './sign-in.js';

/** The fields a wallet must sign, as /v1/siwe/options and /v1/passkey/smart-account/options answer them. */
export interface MessageOptions {
  domain: string;
  uri: string;
  chainId: number;
  version: '1';
  statement: string;
  nonce: string;
  issuedAt: string;
  expirationTime: string;
}

export async function issueNonce(w: WalletDeps, purpose: 'siwe' | 'smart-account'): Promise<{ nonce: string; issuedAt: string; expirationTime: string }> {
  const challenge = newChallenge(purpose, walletSettings(w.runtime().gateway).nonceTtlMs, w.now());
  await w.challenges.put(challenge);
  return { nonce: challenge.value, issuedAt: challenge.issuedAt, expirationTime: challenge.expiresAt };
}

export async function messageOptions(w: WalletDeps, purpose: 'siwe' | 'smart-account', chainId: number): Promise<MessageOptions> {
  const settings = walletSettings(w.runtime().gateway);
  const { nonce, issuedAt, expirationTime } = await issueNonce(w, purpose);
  return { domain: new URL(w.authOrigin).host, uri: w.authOrigin, chainId, version: '1', statement: settings.statement, nonce, issuedAt, expirationTime };
}

/** The chain /v1/siwe/options proposes: the one asked for, if accepted, else the first accepted. */
export function siweChain(w: WalletDeps, asked: number | undefined): number {
  const { chainIds } = walletSettings(w.runtime().gateway);
  if (asked === undefined) return chainIds[0]!;
  if (!chainIds.includes(asked)) throw new GatewayError('wallet-chain-not-allowed', `chain id ${asked} is not accepted here; use ${chainIds.join(', ')}`);
  return asked;
}

export async function siweSignIn(w: WalletDeps, body: { message: string; signature: Hex }): Promise<WalletSignIn> {
  const settings = walletSettings(w.runtime().gateway);
  const m = checkMessage(body.message, { authOrigin: w.authOrigin, chainIds: settings.chainIds, now: new Date(w.now()) });
  let valid = false;
  try {
    valid = await verifyMessage({ address: m.address, message: body.message, signature: body.signature });
  } catch {
    valid = false; // a signature that is not 65 bytes, or not a point on the curve, proves nothing
  }
  if (!valid) throw new GatewayError('wallet-signature-invalid');
  await redeemNonce(w.challenges, 'siwe', m.nonce);
  const principal = await principalForAccount(w, eoaKey(m.address));
  return { principalId: principal.id, username: principal.username, address: getAddress(m.address), chainId: m.chainId, created: principal.created, method: 'siwe' };
}
