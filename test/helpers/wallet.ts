/**
 * A wallet as a person's browser would drive the auth host: real secp256k1 keys from viem sign real
 * EIP-4361 messages (SIWE) and CACAOs (@didtools/cacao, as did-session would make them), and the calls go
 * over HTTP to a test gateway's auth listener.
 */
import { Cacao, CacaoBlock, SiweMessage } from '@didtools/cacao';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { Hex } from 'viem';
import type { MessageOptions } from '../../src/wallet/siwe.js';

export interface Answer {
  status: number;
  body: any;
}

/**
 * A POST as the sign-in page would send it: JSON, with the page's `Origin` (every POST on the auth host is
 * same-origin only). The origin defaults to the listener's own default public origin
 * (`http://localhost:<port>`); a gateway with PORTCULLIS_AUTH_URL set is given its origin explicitly.
 */
export async function post(base: string, path: string, body?: unknown, origin?: string): Promise<Answer> {
  const page = origin ?? `http://localhost:${new URL(base).port}`;
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { origin: page, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

/** The fields /v1/siwe/options (or the smart account's) answers: the server's own type. */
export type Fields = MessageOptions;

export function newWallet(): PrivateKeyAccount {
  return privateKeyToAccount(generatePrivateKey());
}

/** The EIP-4361 text for the fields, with any of them changed, as viem writes it. */
export function siweText(
  address: Hex,
  f: Fields,
  patch: Partial<Omit<Fields, 'issuedAt' | 'expirationTime'>> & { issuedAt?: string; expirationTime?: string | null; notBefore?: string } = {},
): string {
  const g = { ...f, ...patch };
  return createSiweMessage({
    address,
    domain: g.domain,
    uri: g.uri,
    chainId: g.chainId,
    version: g.version,
    statement: g.statement,
    nonce: g.nonce,
    issuedAt: new Date(g.issuedAt),
    ...(g.expirationTime ? { expirationTime: new Date(g.expirationTime) } : {}),
    ...(patch.notBefore ? { notBefore: new Date(patch.notBefore) } : {}),
  });
}

/** A signed CACAO (CAIP-74, did:pkh with an EIP-4361 payload), as base64url dag-cbor. */
export async function signedCacao(
  wallet: PrivateKeyAccount,
  f: { domain: string; aud: string; nonce: string; chainId: number; issuedAt?: string; expirationTime?: string },
  signer: PrivateKeyAccount = wallet,
): Promise<string> {
  const siwe = new SiweMessage({
    domain: f.domain,
    address: wallet.address.toLowerCase(),
    statement: 'Sign in to portcullis.',
    uri: f.aud,
    version: '1',
    nonce: f.nonce,
    issuedAt: f.issuedAt ?? new Date().toISOString(),
    ...(f.expirationTime ? { expirationTime: f.expirationTime } : {}),
    chainId: String(f.chainId),
  });
  siwe.signature = await signer.signMessage({ message: siwe.signMessage() });
  const cacao = Cacao.fromSiweMessage(siwe);
  const block = await CacaoBlock.fromCacao(cacao);
  return Buffer.from(block.bytes).toString('base64url');
}
