/**
 * Receipts: the durable record of a call that reached admission step 3 or later — admitted, refused by
 * team rules, quota or guardrails, or failed upstream. A receipt names the versions the call was decided
 * under, so a compliance reviewer can match it to the rules served by GET /v1/secure, and what the call
 * counted and cost: tokens (input, cached input, output), the reservation, the charge and the billing. It
 * holds rule ids and counts, never prompt text or tokens. Written once per call id, by the meter: a settled
 * call's receipt in the same write as its charge, and sequenced there as a leaf of the receipt log (log.ts),
 * whose signed checkpoints prove it (proofs.ts).
 */
import { decisionVersions } from '../config/compile.js';
import type { Call } from '../stages/call.js';
import type { Receipt } from '../store/store.js';
import type { Meter, SettleInput, Settlement } from '../metering/meter.js';
import type { JobClosing } from '../metering/ledger.js';
import { StoreUnavailable } from '../store/errors.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { observeSettlement } from '../observe/metrics.js';

/** Pauses before each retry of a settlement the store could not take (about 1 s in all). */
const SETTLE_RETRY_MS = [50, 200, 750];

export type Outcome = 'answered' | 'refused' | 'failed';

export function newReceiptId(callId: string): string {
  return `rcpt_${callId}`;
}

export function buildReceipt(call: Call, outcome: Outcome, error?: { code: string }, s: Settlement | undefined = call.settlement): Receipt {
  const principal = call.identity!.principal;
  const d = call.decision;
  const v = call.runtime.versions;
  const r = call.reservation;
  return {
    id: call.receiptId ?? newReceiptId(call.id),
    callId: call.id,
    principalId: principal.id,
    createdAt: call.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    outcome,
    ...(error ? { error } : {}),
    model: call.model?.id ?? call.valid?.request.model,
    route: call.model?.route ?? null,
    team: d?.team ?? null,
    task: call.task ?? null,
    scope: d?.scope ?? null,
    band: d?.band ?? null,
    decision: {
      allow: d?.allow ?? false,
      codes: d?.denials.map((x) => x.code) ?? [],
      versions: decisionVersions(v),
      ...(call.decisionRecord ? { record: call.decisionRecord } : {}),
    },
    guardrails: d?.guardrails ?? { block: [], redact: [], flag: [] },
    upstream: call.answer
      ? {
          model: call.fallbackModel ? call.runtime.models.get(call.fallbackModel)?.upstreamModel : call.model?.upstreamModel,
          echoedModel: call.answer.model,
          ...(call.upstreamOrigin ? { origin: call.upstreamOrigin } : {}),
          ...(call.fallbackModel ? { fallbackModel: call.fallbackModel } : {}),
        }
      : null,
    ...(r ? { day: r.day } : {}),
    usage: s?.usage ?? null,
    billing: s?.billing ?? r?.billing ?? null,
    chargedMicroUSD: s?.chargedMicroUSD ?? 0,
    pricedMicroUSD: s?.pricedMicroUSD ?? 0,
    reservedMicroUSD: r?.reservedMicroUSD ?? 0,
    reservedTokens: r?.reservedTokens ?? 0,
    countedTokens: s?.countedTokens ?? 0,
    rates: r?.rates ?? null,
    ...(s?.note ? { note: s.note } : {}),
  };
}

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
