/**
 * The admission rule of step 4, as data in, verdict out. Its inputs are defined once, `Admission` (named
 * fields, built by `admission` from the request): the memory ledger runs `decide` below on it; the Redis
 * ledger sends the same fields to its reserve script (`admissionArgs`), whose `decide`
 * (lua/admission.lib.lua) reads them back under the same names and answers the same verdicts — the contract
 * suite holds the two to the same answers. In order:
 *
 *   1. Rung ceiling (red team): the day's rung tokens (settled + held) plus this call's worst case above
 *      `ceilingPerDay` -> 429 `daily-ceiling-reached`.
 *   2. Free: the call fits what is left of the free allowance (1 request, or its worst-case tokens) and,
 *      on the red team, stays within the rung's `tokensPerDay`. A free call holds no money.
 *   3. Otherwise paid: it holds its worst-case price against the credits, if they cover it. If not: 429
 *      `daily-allowance-exhausted` when the principal was never granted credits (the daily allowance is
 *      their limit), else 402 `insufficient-credits` — always so while the balance is below zero (a call
 *      charged more than it reserved), until credits are added.
 */
import { GatewayError } from '../errors.js';
import { worstCaseMicroUSD, type Billing, type FreeUnit, type ReserveRequest } from './meter.js';

/** What a call is weighed against: its worst case and the day's limits, in named fields. */
export interface Admission {
  /** The free allowance per principal per UTC day, in `freeUnit`s. */
  freePerDay: number;
  freeUnit: FreeUnit;
  /** The rung allowance and ceiling in tokens per day; absent for a call that counts against no rung. */
  rung?: { tokensPerDay: number; ceilingPerDay: number };
  /** Worst case: the input token bound + max_tokens. */
  estimatedTokens: number;
  /** The worst case priced at the rates: what a paid call holds. */
  costMicroUSD: number;
}

export function admission(req: ReserveRequest): Admission {
  const { free, rung } = req.limits;
  return {
    freePerDay: free.perDay,
    freeUnit: free.unit,
    ...(rung ? { rung: { tokensPerDay: rung.tokensPerDay, ceilingPerDay: rung.ceilingPerDay } } : {}),
    estimatedTokens: req.estimatedTokens,
    costMicroUSD: worstCaseMicroUSD(req),
  };
}

/**
 * The admission as the Redis reserve script's first six arguments, in the order lua/reserve.lua reads them
 * back into the same names: plain strings, which Redis reads for less than it decodes a JSON text.
 */
export function admissionArgs(a: Admission): string[] {
  const r = a.rung;
  return [
    String(a.freePerDay),
    a.freeUnit,
    String(a.estimatedTokens),
    String(a.costMicroUSD),
    r ? String(r.tokensPerDay) : '',
    r ? String(r.ceilingPerDay) : '',
  ];
}

export interface DayCounters {
  freeUsed: number;
  freeHeld: number;
  rungTokensUsed: number;
  rungTokensHeld: number;
}

export interface Balance {
  granted: number;
  spent: number;
  reserved: number;
}

export type Verdict =
  | { kind: 'ok'; billing: Billing; micro: number; freeHold: number; rungHold: number }
  | { kind: 'ceiling'; rungTokens: number }
  | { kind: 'credits'; granted: number; available: number; rungTokens: number; freeCount: number };

export function decide(a: Admission, day: DayCounters, balance: Balance): Verdict {
  const { rung } = a;
  const est = a.estimatedTokens;
  const rungTokens = day.rungTokensUsed + day.rungTokensHeld;
  if (rung && rungTokens + est > rung.ceilingPerDay) return { kind: 'ceiling', rungTokens };
  const units = a.freeUnit === 'requests' ? 1 : est;
  const freeCount = day.freeUsed + day.freeHeld;
  const isFree = freeCount + units <= a.freePerDay && !(rung && rungTokens + est > rung.tokensPerDay);
  const rungHold = rung ? est : 0;
  if (isFree) return { kind: 'ok', billing: 'free', micro: 0, freeHold: units, rungHold };
  const available = balance.granted - balance.spent - balance.reserved;
  if (available < a.costMicroUSD) return { kind: 'credits', granted: balance.granted, available, rungTokens, freeCount };
  return { kind: 'ok', billing: 'paid', micro: a.costMicroUSD, freeHold: 0, rungHold };
}

/** The error a refusal answers with; messages give the exact numbers (never prompt text). */
export function refusal(req: ReserveRequest, cost: number, day: string, v: Exclude<Verdict, { kind: 'ok' }>): GatewayError {
  const { free, rung } = req.limits;
  const est = req.estimatedTokens;
  if (v.kind === 'ceiling') {
    return new GatewayError(
      'daily-ceiling-reached',
      `the daily ceiling of ${rung!.ceilingPerDay} tokens at rung ${rung!.id} would be passed: ${v.rungTokens} used or held on ${day} (UTC), ` +
        `and this call may use ${est} (input bound + max_tokens); lower max_tokens, or wait for 00:00 UTC`,
    );
  }
  if (v.granted === 0) {
    const overRung = rung !== null && v.rungTokens + est > rung.tokensPerDay;
    const what = overRung
      ? `the allowance of ${rung.tokensPerDay} tokens per day at rung ${rung.id} is used (${v.rungTokens} used or held on ${day}, this call may use ${est})`
      : `the free allowance of ${free.perDay} ${free.unit} per day is used (${v.freeCount} on ${day}${free.unit === 'tokens' ? `, this call may use ${est}` : ''})`;
    return new GatewayError(
      'daily-allowance-exhausted',
      `${what} and the principal holds no credits; calls are free again from 00:00 UTC, or paid with credits`,
    );
  }
  if (v.available < 0) {
    return new GatewayError(
      'insufficient-credits',
      `the credit balance is ${-v.available} micro-USD below zero (a call's reported usage passed what was reserved for it); add credits to make paid calls again`,
    );
  }
  return new GatewayError(
    'insufficient-credits',
    `this call may cost ${cost} micro-USD (input bound + max_tokens at the rates) and ${v.available} micro-USD of credits are available; add credits or lower max_tokens`,
  );
}
