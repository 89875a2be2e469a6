/**
 * What the meter is asked for a call, as domain values. To reserve: its worst case, the day's limits it
 * counts against and the rates, all from the runtime the call was admitted under (built once, in the meter
 * stage). To settle: what the upstream reported, and whether it is charged — an answered call is charged
 * its usage; one that ends unanswered is charged what the upstream reported if anything (an echo mismatch
 * is recorded but not charged; usage that is not a count of tokens is charged at the worst case reserved).
 */
import type { Runtime } from '../config/compile.js';
import type { Call } from './call.js';
import type { ReserveRequest, SettleInput } from '../metering/meter.js';
import type { Usage } from '../metering/price.js';
import type { UpstreamAnswer } from '../openai/answer.js';

/**
 * How long a reservation may stay open: the longest a job may run, plus a lease and a sweep for the job
 * sweeper to release it first when its instance dies, plus a minute. Past it the meter's own sweep reclaims
 * it — the bound on what a crashed gateway can leave held.
 */
export function reservationTtlMs(runtime: Runtime): number {
  const j = runtime.jobs;
  return j.maxRunMs + j.leaseMs + j.sweepEveryMs + 60_000;
}

export function reserveRequest(call: Call): ReserveRequest {
  const runtime = call.runtime;
  const principal = call.identity!.principal;
  const model = call.model!;
  const maxTokens = call.valid!.maxTokens;
  // Blue-team calls count toward the free allowance and credits only; red-team calls also against the
  // rung's allowance and ceiling. Admission has already refused a red call without a valid rung; should one
  // get here, it meets a ceiling of 0.
  const held = model.team === 'red' && principal.rung ? runtime.rungs.get(principal.rung.id) : undefined;
  const rung =
    model.team !== 'red'
      ? null
      : held
        ? { id: held.id, tokensPerDay: held.tokensPerDay, ceilingPerDay: held.ceilingPerDay }
        : { id: 'none', tokensPerDay: 0, ceilingPerDay: 0 };
  return {
    callId: call.id,
    principalId: principal.id,
    model: model.id,
    task: call.task!,
    estimatedTokens: call.valid!.inputTokens + maxTokens,
    maxOutputTokens: maxTokens,
    limits: { free: runtime.bundle.rungs.data.freeAllowance, rung },
    rates: runtime.rates,
    ttlMs: reservationTtlMs(runtime),
  };
}

/**
 * The usage the reservation was sized for (input bound, max_tokens of output): what a call is charged
 * when the upstream ran but reported usage that is not a count of tokens (src/openai/answer.ts says why).
 * Priced at the reservation's rates it comes to exactly the worst case held.
 */
export function worstCaseUsage(call: Call): Usage {
  const prompt = call.valid!.inputTokens;
  const completion = call.valid!.maxTokens;
  // In key order, as src/openai/answer.ts's usage: the receipt carries it.
  return { cached_tokens: 0, completion_tokens: completion, prompt_tokens: prompt, total_tokens: prompt + completion };
}

/** The settlement of an answered call: its usage, charged. */
export function answeredSettlement(answer: UpstreamAnswer): SettleInput {
  return { usage: answer.usage, chargeable: true };
}

/** The settlement of a call that ends unanswered with `code`, holding a reservation. */
export function unansweredSettlement(call: Call, code: string): SettleInput {
  const usage = code === 'upstream-usage-malformed' ? worstCaseUsage(call) : (call.answer?.usage ?? null);
  return { usage, chargeable: code !== 'upstream-model-mismatch' };
}
