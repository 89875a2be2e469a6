/**
 * How a call that will not be answered ends: its reservation released (unless settlement already charged
 * it) and a receipt saying how it ended (unless one was written). Shared by the meter stage (failures
 * before the job took the call) and the job runner (failures after), so both end a call the same way.
 */
import { GatewayError } from '../errors.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import { writeReceipt } from '../receipts/receipt.js';
import type { Logger } from '../log.js';
import type { Call } from './call.js';

export async function endUnanswered(store: Store, meter: Meter, log: Logger, call: Call, err: unknown): Promise<void> {
  if (call.reservation && !call.settlement) {
    await meter.release(call.reservation).catch((e: Error) => log.error('reservation.release.failed', { callId: call.id, error: e.name }));
  }
  if (!call.receiptId) {
    const code = err instanceof GatewayError ? err.code : 'internal-error';
    const outcome = code === 'guardrail-blocked' ? 'refused' : 'failed';
    await writeReceipt(store, call, outcome, { code }).catch((e: Error) => log.error('receipt.write.failed', { callId: call.id, error: e.name }));
  }
}
