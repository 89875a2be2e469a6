/**
 * meter (admission step 4): reserve the worst case (input estimate + max_tokens) before anything goes
 * upstream, and own that reservation until a job takes the call over. Whatever fails before that — a
 * guardrail block, a lost race to an identical job — releases the reservation and leaves a receipt saying
 * how the call ended. After the hand-over the job's runner owns both. Nothing is half-done.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import { reserveRequest } from '../metering/request.js';
import { writeReceipt } from '../receipts/receipt.js';
import type { Call } from './call.js';
import { endUnanswered } from './end-call.js';
import type { Logger } from '../log.js';

export function meter(store: Store, meter: Meter, log: Logger) {
  return async function meterStage(ctx: Context, next: Next): Promise<void> {
    const call: Call = ctx.state.call;
    try {
      call.reservation = await meter.reserve(reserveRequest(call));
    } catch (err) {
      if (err instanceof GatewayError) await writeReceipt(meter, call, 'refused', { code: err.code });
      throw err;
    }
    try {
      await next();
    } catch (err) {
      // Once a job has taken the call, the job's runner ends it (a 504 while waiting is not the end).
      if (!call.handedOver) await endUnanswered(store, meter, log, call, err);
      throw err;
    }
  };
}
