/**
 * How a call that will not be answered ends: settled in one write with its receipt — what the upstream
 * reported (if it reported anything) charged, the rest of the reservation released — unless settlement
 * already happened; or, holding no reservation, just its receipt (unless one was written). What is charged
 * is src/call/meter-requests.ts's. Used by the meter stage (failures before a job took the call) and the job
 * runner (failures after), so both end a call the same way.
 */
import { GatewayError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import { settleCall, writeReceipt } from '../receipts/receipt.js';
import type { Logger } from '../log.js';
import type { Call } from './call.js';
import { unansweredSettlement } from './meter-requests.js';

export async function endUnanswered(meter: Meter, log: Logger, call: Call, err: unknown): Promise<void> {
  const code = err instanceof GatewayError ? err.code : 'internal-error';
  const outcome = code === 'guardrail-blocked' || code === 'guardrail-classifier-unavailable' ? 'refused' : 'failed';
  if (call.reservation && !call.settlement) {
    // On failure the reservation stays held until its expiry, when the meter's sweep releases it.
    await settleCall(meter, call, outcome, unansweredSettlement(call, code), { code }).catch((e: Error) =>
      log.error('settlement.failed', { callId: call.id, error: e.name }),
    );
  } else if (!call.receiptId) {
    await writeReceipt(meter, call, outcome, { code }).catch((e: Error) => log.error('receipt.write.failed', { callId: call.id, error: e.name }));
  }
}
