/**
 * What the meter is asked for a call: its worst case, the day's limits it counts against and the rates,
 * all from the runtime the call was admitted under. Built once, in the meter stage.
 */
import type { Runtime } from '../config/compile.js';
import type { Call } from '../stages/call.js';
import type { ReserveRequest } from './meter.js';
import type { Usage } from './price.js';

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
  const rung = model.team !== 'red' ? null : held ? { id: held.id, tokensPerDay: held.tokensPerDay, ceilingPerDay: held.ceilingPerDay } : { id: 'none', tokensPerDay: 0, ceilingPerDay: 0 };
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
 * when the upstream ran but reported usage that is not a count of tokens (forward.ts says why).
 * Priced at the reservation's rates it comes to exactly the worst case held.
 */
export function worstCaseUsage(call: Call): Usage {
  const prompt = call.valid!.inputTokens;
  const completion = call.valid!.maxTokens;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cached_tokens: 0 };
}
