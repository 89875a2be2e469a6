/**
 * Smart-account sign-in, `/v1/passkey/smart-account/options` and `/verify`: a passkey-owned smart account
 * signs a SIWE message on one chain (`wallet.smartAccount.chainId`, Base 8453 by default). The account is a
 * contract, so its signature is checked on chain, by viem's `verifyMessage` action against a node of that
 * chain (`wallet.smartAccount.rpcUrl`): ERC-1271 `isValidSignature` for a deployed account, and ERC-6492
 * (the factory call that would deploy it, simulated in an eth_call) for one not deployed yet.
 *
 * The traps, and what is done about them:
 *  - an undeployed account has no code, so plain ERC-1271 would fail: viem unwraps ERC-6492 signatures and
 *    runs the deployless validator (no validator contract is assumed on the chain);
 *  - an account that signs with chainId 1 (or any chain but the configured one) is refused by the message
 *    check (`wallet-chain-not-allowed`), before any node is asked;
 *  - the node itself must serve the configured chain: its eth_chainId is asked on every sign-in, so a
 *    misconfigured or unreachable RPC answers 503 `smart-account-unavailable`, never a false "valid".
 * The nonce is taken only after the account's signature verified.
 */
import { createPublicClient, getAddress, http, type Hex, type PublicClient } from 'viem';
import { GatewayError } from '../errors.js';
import { walletSettings } from './config.js';
import { checkMessage } from './message.js';
import { smartAccountKey } from './accounts.js';
import { principalForAccount, redeemNonce, type WalletDeps, type WalletSignIn } from './sign-in.js';

/** One client per RPC URL (a reload may change it); no chain object, so no on-chain verifier is assumed. */
const clients = new Map<string, PublicClient>();
function clientFor(rpcUrl: string): PublicClient {
  let c = clients.get(rpcUrl);
  if (!c) {
    c = createPublicClient({ transport: http(rpcUrl, { retryCount: 0, timeout: 10_000 }) });
    clients.set(rpcUrl, c);
  }
  return c;
}

export function smartAccountConfig(w: WalletDeps): { chainId: number; rpcUrl: string } {
  const { smartAccount } = walletSettings(w.runtime().gateway);
  if (!smartAccount.rpcUrl) throw new GatewayError('smart-account-unavailable', 'smart-account sign-in is not configured here (wallet.smartAccount.rpcUrl)');
  return { chainId: smartAccount.chainId, rpcUrl: smartAccount.rpcUrl };
}

export async function smartAccountSignIn(w: WalletDeps, body: { message: string; signature: Hex }): Promise<WalletSignIn> {
  const { chainId, rpcUrl } = smartAccountConfig(w);
  const m = checkMessage(body.message, { authOrigin: w.authOrigin, chainIds: [chainId], now: new Date(w.now()) });
  const client = clientFor(rpcUrl);
  let served: number;
  try {
    served = await client.getChainId();
  } catch {
    throw new GatewayError('smart-account-unavailable');
  }
  if (served !== chainId) throw new GatewayError('smart-account-unavailable', `the configured node serves chain ${served}, not ${chainId}`);
  let valid: boolean;
  try {
    valid = await client.verifyMessage({ address: m.address, message: body.message, signature: body.signature });
  } catch {
    // viem answers false for a signature the account refuses; what throws is the node failing to answer.
    throw new GatewayError('smart-account-unavailable');
  }
  if (!valid) throw new GatewayError('wallet-signature-invalid');
  await redeemNonce(w, 'smart-account', m.nonce);
  const { principal, created } = await principalForAccount(w, smartAccountKey(chainId, m.address));
  return { principal, address: getAddress(m.address), chainId, created, method: 'smart-account' };
}
