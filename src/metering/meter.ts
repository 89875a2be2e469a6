/**
 * The meter: the ledger of quota and money. It is the one place a call's `billing`, `chargedMicroUSD` and
 * quota come from, and the one writer of receipts (each sequenced as a leaf of the receipt log where it is stored).
 *
 * Reserve, then settle (docs/decisions.md, Quota and money):
 *   reserve  one atomic step: count the call against the principal's UTC day (free allowance, rung
 *            allowance and ceiling) and, when it is paid, hold its worst case (a true upper bound on the
 *            input tokens + max_tokens, priced at the rates) against the credit balance; or refuse it (429
 *            for a daily limit, 402 for credits — also while the balance is below zero) having changed nothing.
 *   settle   one atomic, durable step keyed by the call id: charge the usage the upstream reported — all of
 *            it, even above what was held, which can take the balance below zero — release the hold, and
 *            store the receipt with its log leaf. Applied once: a retried settlement, even one whose first
 *            reply was lost, finds the receipt and changes nothing.
 * A reservation left behind by a gateway that died is reclaimed by a sweep once it expires.
 *
 * Implementations: `redis-meter.ts` (Lua scripts on the store's Redis connection) and `memory-meter.ts` (one
 * process); one contract suite (test/metering/contract.test.ts) runs against both. Its money operations are
 * the ledger's (ledger.ts), which also opens and closes a call's job in the same writes.
 */
import type { Receipt } from '../store/store.js';
import type { Ledger } from './ledger.js';
import { priceMicroUSD, type Usage } from './price.js';

// The values a reservation and a settlement are made of live in money.ts, which imports nothing of the
// ledger or the jobs, so the job record and the ledger can both name them.
export {
  provisionalReservation,
  type Billing,
  type DailyLimits,
  type FreeUnit,
  type Reservation,
  type ReserveRequest,
  type SettleInput,
  type Settlement,
} from './money.js';
import type { Reservation, ReserveRequest, SettleInput, Settlement } from './money.js';

export interface BalanceRow {
  scope: 'ai';
  grantedMicroUSD: number;
  spentMicroUSD: number;
  reservedMicroUSD: number;
  availableMicroUSD: number;
}

/** GET /v1/billing/status. */
export interface BillingStatus {
  status: 'connected';
  plan: string | null;
  balances: BalanceRow[];
}

/** A principal's counters for one UTC day. */
export interface DayUsage {
  day: string;
  /** Free-allowance units (requests or tokens) used by settled calls and held by open ones. */
  freeUsed: number;
  freeHeld: number;
  /** Tokens counted against the rung allowance: settled, and held by open calls. */
  rungTokensUsed: number;
  rungTokensHeld: number;
}

export interface GrantRequest {
  /** Idempotency: a grant with an operation id already applied changes nothing. */
  operationId: string;
  principalId: string;
  kind: 'credits' | 'plan';
  microUSD: number;
  /** For kind `plan`: the plan id the principal moves to. */
  plan?: string;
  source: string;
  /** For a grant a payment bought: what was paid, in cents (a dispute's share of it is taken back). */
  paidCents?: number;
}

export interface GrantRecord extends GrantRequest {
  at: string;
}

export interface GrantResult {
  /** False when the operation id had been applied before: `grant` is what was applied then. */
  applied: boolean;
  grant: GrantRecord;
}

/**
 * Taking back (part of) a grant whose payment was refunded or disputed. `targetMicroUSD` is the total
 * share of the grant that `claimKey` (one refund history, or one dispute) comes to now: a second partial
 * refund names the larger total, and only the difference is taken. Applied once per operation id (the
 * processor's event id). Never takes the balance below what has been spent: what is already spent is
 * waived, not owed.
 */
export interface ClawbackRequest {
  operationId: string;
  principalId: string;
  claimKey: string;
  targetMicroUSD: number;
  source: string;
}

export interface ClawbackResult {
  /** False when the operation id was applied before: the figures are those of that first time. */
  applied: boolean;
  /** Taken off the balance's grants. */
  takenMicroUSD: number;
  /** Claimed but already spent, so left. */
  waivedMicroUSD: number;
}

/** The ledger (ledger.ts) and what else the meter answers: balances, usage, grants, the sweep. */
export interface Meter extends Ledger {
  readonly kind: 'memory' | 'redis';
  /** The meter's UTC day (YYYY-MM-DD), by its clock. */
  today(): string;
  status(principalId: string): Promise<BillingStatus>;
  usage(principalId: string, day: string): Promise<DayUsage>;
  /** Applies a grant once per operation id. */
  grant(req: GrantRequest): Promise<GrantResult>;
  /** The grant applied under an operation id, if any. */
  grantOf(operationId: string): Promise<GrantRecord | null>;
  /** Takes back part of a grant, once per operation id (see ClawbackRequest). */
  clawback(req: ClawbackRequest): Promise<ClawbackResult>;
  /** Releases expired reservations (at most `limit`); returns how many. */
  sweep(limit?: number): Promise<number>;
  /** Sweeps every `everyMs` until close. */
  start(everyMs?: number): void;
  close(): Promise<void>;
}

export const NOTHING_REPORTED: SettleInput = { usage: null, chargeable: false };
// In key order, as src/openai/answer.ts's usage: the receipt carries it.
export const ZERO_USAGE: Usage = { cached_tokens: 0, completion_tokens: 0, prompt_tokens: 0, total_tokens: 0 };

/** The UTC calendar day of an instant, YYYY-MM-DD. */
export function utcDay(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** Seconds from `now` to two days after the end of `day`: how long a day's counters are kept. */
export function dayTtlSeconds(day: string, now: number): number {
  const end = Date.parse(`${day}T00:00:00.000Z`) + 3 * 86_400_000;
  return Math.max(60, Math.ceil((end - now) / 1000));
}

/** The worst case of a call, priced: the input bound at the input rate, max_tokens at the output rate. */
export function worstCaseMicroUSD(req: Pick<ReserveRequest, 'estimatedTokens' | 'maxOutputTokens' | 'rates'>): number {
  const output = Math.min(req.maxOutputTokens, req.estimatedTokens);
  const input = req.estimatedTokens - output;
  return priceMicroUSD({ prompt_tokens: input, completion_tokens: output, total_tokens: req.estimatedTokens, cached_tokens: 0 }, req.rates);
}

/**
 * What settling `input` against `reservation` comes to, before it is applied: the usage priced at the
 * reservation's rates — never capped at what was held: a charge is the provider's reported usage — and zero
 * for a free call or usage that is not chargeable. A paid charge above the hold is noted `above-reservation`
 * (the balance may then go below zero). Deterministic, so a retried settlement computes the same numbers.
 */
export function quote(reservation: Reservation, input: SettleInput): Settlement {
  const usage = input.usage ?? ZERO_USAGE;
  const counts = input.chargeable && input.usage !== null;
  const priced = counts && reservation.billing === 'paid' ? priceMicroUSD(usage, reservation.rates) : 0;
  return {
    billing: reservation.billing,
    chargedMicroUSD: priced,
    usage,
    pricedMicroUSD: priced,
    reservedMicroUSD: reservation.reservedMicroUSD,
    countedTokens: counts ? usage.prompt_tokens + usage.completion_tokens : 0,
    ...(priced > reservation.reservedMicroUSD ? { note: 'above-reservation' as const } : {}),
  };
}

/** What a settlement consumes of the day's free allowance (the call's unit) and rung allowance. */
export function consumption(reservation: Reservation, s: Settlement, input: SettleInput): { free: number; rungTokens: number } {
  const consumed = input.chargeable && input.usage !== null;
  const free = reservation.freeUnit === null ? 0 : reservation.freeUnit === 'requests' ? (consumed ? 1 : 0) : s.countedTokens;
  return { free, rungTokens: reservation.rungCounted ? s.countedTokens : 0 };
}

/** The settlement a stored receipt records (what a repeated settlement returns). */
export function settlementOf(receipt: Receipt, fallback: Settlement): Settlement {
  if (typeof receipt['chargedMicroUSD'] !== 'number' || (receipt['billing'] !== 'free' && receipt['billing'] !== 'paid')) return fallback;
  const r = receipt as Receipt & Partial<Settlement>;
  return {
    billing: r.billing!,
    chargedMicroUSD: r.chargedMicroUSD!,
    usage: r.usage ?? fallback.usage,
    pricedMicroUSD: r.pricedMicroUSD ?? fallback.pricedMicroUSD,
    reservedMicroUSD: r.reservedMicroUSD ?? fallback.reservedMicroUSD,
    countedTokens: r.countedTokens ?? fallback.countedTokens,
    ...(r.note ? { note: r.note } : {}),
  };
}
