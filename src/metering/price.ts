/**
 * Pricing a call: integer micro-USD from token counts and per-million-token rates. The sum of count x rate
 * over the three kinds is divided by one million and rounded up once, at the end, in BigInt — no floats
 * anywhere on a money path (docs/decisions.md, Quota and money).
 */
import type { BillingDoc } from '../config/types.js';

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Of prompt_tokens, those the upstream served from its cache (rated lower). */
  cached_tokens: number;
}

export function priceMicroUSD(usage: Usage, rates: Pick<BillingDoc['rates'], 'inputPerMTok' | 'cachedInputPerMTok' | 'outputPerMTok'>): number {
  const cached = BigInt(Math.min(usage.cached_tokens, usage.prompt_tokens));
  const fresh = BigInt(usage.prompt_tokens) - cached;
  const sum = fresh * BigInt(rates.inputPerMTok) + cached * BigInt(rates.cachedInputPerMTok) + BigInt(usage.completion_tokens) * BigInt(rates.outputPerMTok);
  return Number((sum + 999_999n) / 1_000_000n);
}
