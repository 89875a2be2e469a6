/**
 * Writing receipts: the durable record of a call that reached admission step 3 or later, built by
 * src/call/receipt.ts. Written once per call id, by the meter: a settled call's receipt in the same write
 * as its charge, and sequenced there as a leaf of the receipt log (log.ts), whose signed checkpoints prove
 * it (proofs.ts).
 */
import type { Call } from '../call/call.js';
import { buildReceipt, newReceiptId, type Outcome } from '../call/receipt.js';
import type { Meter, SettleInput, Settlement } from '../metering/meter.js';
import type { JobClosing } from '../metering/ledger.js';
import { StoreUnavailable } from '../store/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { observeSettlement } from '../observe/metrics.js';

/** Pauses before each retry of a settlement the store could not take (about 1 s in all). */
const SETTLE_RETRY_MS = [50, 200, 750];

// The canonical-form tests build receipts through this module, where the builder was first written.
export { buildReceipt };

/** Writes the receipt of a call that holds no reservation (refused at or before reserve). */
export async function writeReceipt(meter: Pick<Meter, 'record'>, call: Call, outcome: Outcome, error?: { code: string }): Promise<string> {
  const receipt = await meter.record(buildReceipt(call, outcome, error));
  call.receiptId = receipt.id;
  return receipt.id;
}

/**
 * Settles a call that holds a reservation and writes its receipt, in one write (once per call id): what
 * `input` reports is charged, the rest released; `job` (the job's end) is written in that write too. Sets `call.settlement` (as stored, on a repeat) and
 * `call.receiptId` only once the write succeeded.
 */
export async function settleCall(
  meter: Meter,
  call: Call,
  outcome: Outcome,
  input: SettleInput,
  error?: { code: string },
  job?: (s: Settlement) => JobClosing,
): Promise<Settlement> {
  // Settlement applies once per call id, so retrying it through a store blip is safe — and it spares a
  // call that was answered (and maybe charged, its reply lost) from ending as an error.
  let settlement: Settlement | undefined;
  for (let attempt = 0; settlement === undefined; attempt += 1) {
    try {
      settlement = await meter.settle(call.reservation!, input, (s) => buildReceipt(call, outcome, error, s), job);
    } catch (err) {
      if (!(err instanceof StoreUnavailable) || attempt >= SETTLE_RETRY_MS.length) throw err;
      await sleep(SETTLE_RETRY_MS[attempt]);
    }
  }
  call.settlement = settlement;
  call.receiptId = call.receiptId ?? newReceiptId(call.id);
  observeSettlement(call.model?.id ?? 'unknown', settlement);
  return settlement;
}
