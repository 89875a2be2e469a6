/**
 * The receipt of a call, built in one place: from the call as it ends (`buildReceipt`: admitted, refused
 * by team rules, quota or guardrails, or failed upstream), or from the job record alone when the call's
 * runner died and a sweep ends it (`interruptedReceipt`). A receipt names the versions the call was
 * decided under, so a compliance reviewer can match it to the rules served by GET /v1/secure, and what the
 * call counted and cost: tokens (input, cached input, output), the reservation, the charge and the
 * billing. It holds rule ids and counts, never prompt text or tokens. Writing it is the meter's
 * (src/receipts/receipt.ts).
 */
import { decisionVersions } from '../config/compile.js';
import type { Receipt } from '../store/store.js';
import type { Settlement } from '../metering/meter.js';
import type { JobRecord } from '../jobs/job.js';
import type { Call } from './call.js';
import { isoNow, isoTime } from '../iso-time.js';

export type Outcome = 'answered' | 'refused' | 'failed';

export function newReceiptId(callId: string): string {
  return `rcpt_${callId}`;
}

export function buildReceipt(call: Call, outcome: Outcome, error?: { code: string }, s: Settlement | undefined = call.settlement): Receipt {
  const principal = call.identity!.principal;
  const d = call.decision;
  const v = call.runtime.versions;
  const r = call.reservation;
  // Members in key order (UTF-16 code units), here and in every object built below: the receipt's canonical
  // text is then JSON.stringify's of it as it is, with nothing to reorder (src/canonical-json.ts).
  return {
    band: d?.band ?? null,
    billing: s?.billing ?? r?.billing ?? null,
    callId: call.id,
    chargedMicroUSD: s?.chargedMicroUSD ?? 0,
    countedTokens: s?.countedTokens ?? 0,
    createdAt: isoTime(call.startedAt.getTime()),
    ...(r ? { day: r.day } : {}),
    decision: {
      allow: d?.allow ?? false,
      codes: d?.denials.map((x) => x.code) ?? [],
      ...(call.decisionRecord ? { record: call.decisionRecord } : {}),
      versions: decisionVersions(v),
    },
    ...(error ? { error } : {}),
    finishedAt: isoNow(),
    guardrails: d?.guardrails ?? { block: [], flag: [], redact: [] },
    id: call.receiptId ?? newReceiptId(call.id),
    model: call.model?.id ?? call.valid?.request.model,
    ...(s?.note ? { note: s.note } : {}),
    outcome,
    pricedMicroUSD: s?.pricedMicroUSD ?? 0,
    principalId: principal.id,
    rates: r?.rates ?? null,
    reservedMicroUSD: r?.reservedMicroUSD ?? 0,
    reservedTokens: r?.reservedTokens ?? 0,
    route: call.model?.route ?? null,
    scope: d?.scope ?? null,
    task: call.task ?? null,
    team: d?.team ?? null,
    upstream: call.answer
      ? {
          echoedModel: call.answer.model,
          ...(call.fallbackModel ? { fallbackModel: call.fallbackModel } : {}),
          model: call.fallbackModel ? call.runtime.models.get(call.fallbackModel)?.upstreamModel : call.model?.upstreamModel,
          ...(call.upstreamOrigin ? { origin: call.upstreamOrigin } : {}),
        }
      : null,
    usage: s?.usage ?? null,
  };
}

/** The receipt of a job whose runner died (its lease ran out): failed `job-interrupted`, from what its record holds. */
export function interruptedReceipt(job: JobRecord, s: Settlement, finishedAt: Date): Receipt {
  // In key order, as buildReceipt's.
  return {
    billing: s.billing,
    callId: job.callId,
    chargedMicroUSD: s.chargedMicroUSD,
    countedTokens: s.countedTokens,
    createdAt: job.createdAt,
    error: { code: 'job-interrupted' },
    finishedAt: finishedAt.toISOString(),
    id: job.receiptId,
    model: job.model,
    outcome: 'failed',
    pricedMicroUSD: s.pricedMicroUSD,
    principalId: job.principalId,
    reservedMicroUSD: s.reservedMicroUSD,
    task: job.task,
    usage: s.usage,
  };
}
