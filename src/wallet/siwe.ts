/**
 * Sign-In with Ethereum (EIP-4361) for externally owned accounts: `/v1/siwe/nonce`, `/v1/siwe/options`
 * and `/v1/siwe/verify` on the auth host. The message is parsed and checked by viem's SIWE utilities
 * (message.ts), the signature by viem's `verifyMessage` (EIP-191 recovery; no chain is asked). Nonces are
 * `siwe` challenges in the store (src/challenges, shared with the passkey ceremonies), shared with CACAO, which signs the same kind of message.
 */
import { getAddress, verifyMessage, type Hex } from 'viem';
import { GatewayError } from '../errors.js';
import { randomBytes } from 'node:crypto';
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

/**
 * A fresh nonce under the method's kind: 128 random bits as 32 hex characters (EIP-4361 asks for 8 or more
 * letters and digits). A collision with a held nonce is refused by the store, never overwritten.
 */
export async function issueNonce(w: WalletDeps, kind: 'siwe' | 'smart-account'): Promise<{ nonce: string; issuedAt: string; expirationTime: string }> {
  const now = w.now();
  const expiresAt = now + walletSettings(w.runtime().gateway).nonceTtlMs;
  const nonce = randomBytes(16).toString('hex');
  if (!(await w.challenges.put(kind, nonce, { data: {}, expiresAt }, now))) throw new Error('a fresh random nonce is already held');
  return { nonce, issuedAt: new Date(now).toISOString(), expirationTime: new Date(expiresAt).toISOString() };
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

/**
 * Checks a signed SIWE message and redeems its nonce: what both a sign-in and linking the key to a signed-in
 * principal need. Answers the account the key is, and the chain its message named.
 */
export async function proveSiwe(w: WalletDeps, body: { message: string; signature: Hex }): Promise<{ key: string; address: string; chainId: number }> {
  const settings = walletSettings(w.runtime().gateway);
  const m = checkMessage(body.message, { authOrigin: w.authOrigin, chainIds: settings.chainIds, now: new Date(w.now()) });
  let valid: boolean;
  try {
    valid = await verifyMessage({ address: m.address, message: body.message, signature: body.signature });
  } catch {
    valid = false; // a signature that is not 65 bytes, or not a point on the curve, proves nothing
  }
  if (!valid) throw new GatewayError('wallet-signature-invalid');
  await redeemNonce(w, 'siwe', m.nonce);
  return { key: eoaKey(m.address), address: getAddress(m.address), chainId: m.chainId };
}

export async function siweSignIn(w: WalletDeps, body: { message: string; signature: Hex }): Promise<WalletSignIn> {
  const { key, address, chainId } = await proveSiwe(w, body);
  const { principal, created } = await principalForAccount(w, key);
  return { principal, address, chainId, created, method: 'siwe' };
}
