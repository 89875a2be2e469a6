/**
 * DID/CACAO one-shot sign-in (CAIP-74), `/v1/cacao/session`: a did:pkh account signs an EIP-4361 payload
 * whose audience is the auth origin, and hands over the signed CACAO as base64url dag-cbor (the CAIP-74
 * encoding). Decoding, the message it stands for and the EIP-191 signature check are @didtools/cacao's and
 * @didtools/pkh-ethereum's; the payload's fields are then held to the same rules as a SIWE message (domain,
 * chain, validity window; the audience plays the URI's part). The nonce is a `siwe` challenge: a CACAO signs
 * the same message a SIWE sign-in does, so it takes its nonce from /v1/siwe/nonce.
 */
import { Cacao, SiweMessage } from '@didtools/cacao';
import { getEIP191Verifier } from '@didtools/pkh-ethereum';
import { getAddress } from 'viem';
import { GatewayError } from '../errors.js';
import { walletSettings } from './config.js';
import { checkMessage } from './message.js';
import { eoaKey } from './accounts.js';
import { principalForAccount, redeemNonce, type WalletDeps, type WalletSignIn } from './sign-in.js';

const verifiers = getEIP191Verifier();

async function decode(encoded: string): Promise<{ cacao: Cacao; message: string }> {
  try {
    const cacao = await Cacao.fromBlockBytes(Buffer.from(encoded, 'base64url'));
    if (cacao.h?.t !== 'eip4361' || cacao.s?.t !== 'eip191' || typeof cacao.s.s !== 'string' || !cacao.p?.iss?.startsWith('did:pkh:eip155:')) {
      throw new Error('not an Ethereum CACAO');
    }
    return { cacao, message: SiweMessage.fromCacao(cacao).toMessage() };
  } catch {
    throw new GatewayError('cacao-invalid');
  }
}

/** Checks a signed CACAO and redeems its nonce (sign-in and linking alike); answers the account it proves. */
export async function proveCacao(w: WalletDeps, body: { cacao: string }): Promise<{ key: string; address: string; chainId: number }> {
  const settings = walletSettings(w.runtime().gateway);
  const now = new Date(w.now());
  const { cacao, message } = await decode(body.cacao);
  const m = checkMessage(message, { authOrigin: w.authOrigin, chainIds: settings.chainIds, now, uriMismatch: 'cacao-audience-mismatch' });
  try {
    await Cacao.verify(cacao, { verifiers, atTime: now });
  } catch {
    throw new GatewayError('wallet-signature-invalid');
  }
  await redeemNonce(w, 'siwe', m.nonce);
  return { key: eoaKey(m.address), address: getAddress(m.address), chainId: m.chainId };
}

export async function cacaoSignIn(w: WalletDeps, body: { cacao: string }): Promise<WalletSignIn> {
  const { key, address, chainId } = await proveCacao(w, body);
  const { principal, created } = await principalForAccount(w, key);
  return { principal, address, chainId, created, method: 'cacao' };
}
