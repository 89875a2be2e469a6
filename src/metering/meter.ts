/**
 * The meter: reserve before forwarding, settle after. This is the one place a call's `billing`,
 * `chargedMicroUSD` and quota come from.
 *
 * This first implementation admits every call inside the free allowance and charges nothing; the Redis
 * accounting of issue #3 (free allowance, rung allowances and ceilings, micro-USD credits, one atomic script
 * to reserve and one durable write to settle) replaces it behind the same interface.
 */
import type { Usage } from './price.js';

export interface ReserveRequest {
  callId: string;
  principalId: string;
  model: string;
  task: string;
  /** Worst case: input token estimate + max_tokens. */
  estimatedTokens: number;
}

export interface Reservation {
  callId: string;
  principalId: string;
  billing: 'free' | 'paid';
  reservedMicroUSD: number;
  reservedTokens: number;
}

export interface Settlement {
  billing: 'free' | 'paid';
  chargedMicroUSD: number;
  usage: Usage;
}

export interface Meter {
  reserve(req: ReserveRequest): Promise<Reservation>;
  /** Charges actual usage and releases the rest; applies once per callId. */
  settle(reservation: Reservation, usage: Usage): Promise<Settlement>;
  /** Releases a reservation that will not be used (a refusal after reserve, an upstream that never started). */
  release(reservation: Reservation): Promise<void>;
}

/** Everything free: the placeholder until the Redis meter lands. */
export function createFreeMeter(): Meter {
  return {
    async reserve(req) {
      return { callId: req.callId, principalId: req.principalId, billing: 'free', reservedMicroUSD: 0, reservedTokens: req.estimatedTokens };
    },
    async settle(reservation, usage) {
      return { billing: reservation.billing, chargedMicroUSD: 0, usage };
    },
    async release() {},
  };
}

/** A rough, deliberately high token estimate for reservations: one token per three characters. */
export function estimateInputTokens(inputChars: number): number {
  return Math.ceil(inputChars / 3);
}
