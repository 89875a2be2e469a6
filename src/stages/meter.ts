/**
 * meter (admission step 4): reserve the worst case (input estimate + max_tokens) before anything goes
 * upstream — creating the call's job in the same write, or finding the live job of an identical request
 * for the call to attach to — and own that reservation until a job takes the call over. Whatever fails
 * before that — a guardrail block, a lost race to an identical job — releases the reservation (and fails
 * the job it created) and leaves a receipt saying how the call ended. After the hand-over the job's runner
 * owns both. Nothing is half-done.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import { reserveRequest } from '../call/meter-requests.js';
import { writeReceipt } from '../receipts/receipt.js';
import { handedOver, type Call } from '../call/call.js';
import { endUnanswered } from '../call/end.js';
import { guardrailRefusal } from '../call/refusal.js';
import { jobRecord } from '../call/job.js';
import { provisionalReservation } from '../metering/meter.js';
import type { JobEngine } from '../jobs/engine.js';
import type { JobRecord } from '../jobs/job.js';
import type { CreateOutcome } from '../jobs/store.js';
import type { Logger } from '../log.js';

/** Seconds from `now` (epoch ms) to the next 00:00 UTC, at least 1. */
export function secondsToUtcMidnight(now: number): number {
  return Math.max(1, Math.ceil((86_400_000 - (now % 86_400_000)) / 1000));
}

export function meter(meter: Meter, log: Logger, creating: JobCreation) {
  return async function meterStage(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    // The decision record, when it rides in the reservation's write (src/decisions/service.ts).
    const decision = call.decisionRide;
    call.decisionRide = undefined;
    let req: ReturnType<typeof reserveRequest>;
    let job: JobRecord | null;
    try {
      req = reserveRequest(call);
      // The call's job is created in the hold's own write — unless the guardrails are going to refuse the call.
      job = guardrailRefusal(call) === null ? creating.engine.claim(jobRecord(call, creating.origin, provisionalReservation(req))) : null;
    } catch (err) {
      decision?.alone();
      throw err;
    }
    let outcome: CreateOutcome | undefined;
    try {
      call.reservation = await meter.reserve(req, job ? creating.engine.opening(job, (o) => (outcome = o)) : undefined, decision);
    } catch (err) {
      if (err instanceof GatewayError) await writeReceipt(meter, call, 'refused', { code: err.code });
      // A daily limit resets at 00:00 UTC: say when, so a client stops retrying blindly (docs/decisions.md).
      if (err instanceof GatewayError && (err.code === 'daily-allowance-exhausted' || err.code === 'daily-ceiling-reached')) {
        ctx.set('retry-after', String(secondsToUtcMidnight(Date.now())));
      }
      throw err;
    }
    const created = job && outcome?.created ? { ...job, billing: call.reservation.billing, reservation: call.reservation } : null;
    call.state = { at: 'reserved', job: created, rival: job && outcome && !outcome.created ? outcome.job : null };
    try {
      await next();
    } catch (err) {
      // Once a job has taken the call, the job's runner ends it (a 504 while waiting is not the end).
      if (!handedOver(call)) {
        if (call.state.at === 'reserved' && call.state.job)
          await creating.engine.abandon(call.state.job, err instanceof GatewayError ? err : new GatewayError('internal-error'));
        await endUnanswered(meter, log, call, err);
      }
      throw err;
    }
  };
}

/** What the meter stage needs to create a call's job with its reservation. */
export interface JobCreation {
  engine: JobEngine;
  origin: JobRecord['origin'];
}
