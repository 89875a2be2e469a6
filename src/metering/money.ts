/**
 * The values of the ledger: what a call asks to reserve (`ReserveRequest`), what the meter holds for it
 * (`Reservation`), what settlement is told (`SettleInput`) and what it charged (`Settlement`). Plain data,
 * importing nothing of the ledger or of jobs, so that a job record (which carries its reservation) and the
 * ledger (which opens and closes jobs) can both name them without importing each other.
 */
import type { BillingDoc } from '../config/types.js';
import type { Usage } from './price.js';

export type Rates = Pick<BillingDoc['rates'], 'inputPerMTok' | 'cachedInputPerMTok' | 'outputPerMTok'>;
export type FreeUnit = 'requests' | 'tokens';
export type Billing = 'free' | 'paid';

/** The day's limits a call is counted against. */
export interface DailyLimits {
  /** The free allowance: per principal per UTC day, in requests or tokens. */
  free: { perDay: number; unit: FreeUnit };
  /** The rung allowance (red team); null for a call that counts toward the free allowance and credits only. */
  rung: { id: string; tokensPerDay: number; ceilingPerDay: number } | null;
}

export interface ReserveRequest {
  callId: string;
  principalId: string;
  model: string;
  task: string;
  /** Worst case: the input token bound (src/compat/forwarded.ts inputTokenBound) + max_tokens. */
  estimatedTokens: number;
  /** Of `estimatedTokens`, max_tokens: priced at the output rate, the rest at the input rate. */
  maxOutputTokens: number;
  limits: DailyLimits;
  rates: Rates;
  /** How long the reservation may stay open; past it a sweep releases it. */
  ttlMs: number;
}

export interface Reservation {
  callId: string;
  principalId: string;
  billing: Billing;
  /** Held against the credit balance (0 for a free call). */
  reservedMicroUSD: number;
  reservedTokens: number;
  /** The UTC day (YYYY-MM-DD) the call counts on, whenever it settles. */
  day: string;
  /** The rates the call is priced at (those in force when it was admitted). */
  rates: Rates;
  /** The free-allowance unit the call holds, when it is free. */
  freeUnit: FreeUnit | null;
  /** Whether the call counts against the rung allowance (red team). */
  rungCounted: boolean;
  /** Epoch ms after which a sweep may release the reservation. */
  expiresAt: number;
}

/**
 * The reservation as far as the request decides it, for a record made before the meter answers (a job
 * created in the reservation's own write): billing, micro-USD held, expiry and day are the meter's to fill in.
 */
export function provisionalReservation(req: ReserveRequest): Reservation {
  return {
    callId: req.callId,
    principalId: req.principalId,
    billing: 'free',
    reservedMicroUSD: 0,
    reservedTokens: req.estimatedTokens,
    day: '',
    rates: req.rates,
    freeUnit: req.limits.free.unit,
    rungCounted: req.limits.rung !== null,
    expiresAt: 0,
  };
}

/** What settlement is told about the call's end. */
export interface SettleInput {
  /** The usage the upstream reported; null when it reported none (failed, timed out, cancelled first). */
  usage: Usage | null;
  /** False when the usage is recorded but not the principal's to pay (an echo mismatch). */
  chargeable: boolean;
}

export interface Settlement {
  billing: Billing;
  chargedMicroUSD: number;
  usage: Usage;
  /** The usage at the rates (equal to the charge unless the call was free or its usage not chargeable). */
  pricedMicroUSD: number;
  reservedMicroUSD: number;
  /** Tokens counted against the day's allowances. */
  countedTokens: number;
  /**
   * `reservation-expired`: the reservation had been swept before settlement; nothing was charged.
   * `above-reservation`: the upstream reported more than the reservation's bound; all of it was charged.
   */
  note?: 'reservation-expired' | 'above-reservation';
}
