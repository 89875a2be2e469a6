/**
 * The wallet sign-ins' settings: `wallet:` of config/gateway.yaml (its schema, and with its defaults filled
 * in), read from the live runtime on every request so that a reload takes effect at once.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Strict } from '../config/schema-kit.js';

export const WalletSchema = Strict(
  {
    nonceTtlSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, description: 'How long a handed-out nonce stays good.' })),
    statement: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\n]*$', description: 'The EIP-4361 statement /v1/siwe/options proposes (one line).' }),
    ),
    chainIds: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1 }), { minItems: 1, uniqueItems: true, description: 'EIP-155 chain ids a SIWE message or a CACAO may name.' }),
    ),
    smartAccount: Type.Optional(
      Strict({
        chainId: Type.Optional(Type.Integer({ minimum: 1, description: 'The chain the smart account signs on (8453, Base).' })),
        rpcUrl: Type.Optional(Type.String({ pattern: '^https?://', description: 'JSON-RPC endpoint of a node of that chain (ERC-1271 / ERC-6492 checks).' })),
      }),
    ),
  },
  { description: 'Wallet sign-ins on the auth host (SIWE, CACAO, smart account). Absent: the defaults shown in config/gateway.yaml.' },
);

export interface WalletSettings {
  nonceTtlMs: number;
  statement: string;
  chainIds: number[];
  smartAccount: { chainId: number; rpcUrl: string | null };
}

// Takes only its own section, so this module need not import the gateway type assembled from it.
export function walletSettings(gateway: { wallet?: Static<typeof WalletSchema> | undefined }): WalletSettings {
  const w = gateway.wallet ?? {};
  return {
    nonceTtlMs: (w.nonceTtlSeconds ?? 300) * 1000,
    statement: w.statement ?? 'Sign in to portcullis.',
    chainIds: w.chainIds ?? [1, 8453, 10, 42161],
    smartAccount: { chainId: w.smartAccount?.chainId ?? 8453, rpcUrl: w.smartAccount?.rpcUrl ?? null },
  };
}
