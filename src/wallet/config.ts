/**
 * The wallet sign-ins' settings: `wallet:` of config/gateway.yaml with its defaults filled in, read from
 * the live runtime on every request so that a reload takes effect at once.
 */
import type { GatewayDoc } from '../config/types.js';

export interface WalletSettings {
  nonceTtlMs: number;
  statement: string;
  chainIds: number[];
  smartAccount: { chainId: number; rpcUrl: string | null };
}

export function walletSettings(gateway: GatewayDoc): WalletSettings {
  const w = gateway.wallet ?? {};
  return {
    nonceTtlMs: (w.nonceTtlSeconds ?? 300) * 1000,
    statement: w.statement ?? 'Sign in to portcullis.',
    chainIds: w.chainIds ?? [1, 8453, 10, 42161],
    smartAccount: { chainId: w.smartAccount?.chainId ?? 8453, rpcUrl: w.smartAccount?.rpcUrl ?? null },
  };
}
