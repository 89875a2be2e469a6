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

/** The receipt of a job whose runner died (its lease ran out): failed `job-interrupted`, from what its record holds. */
export function interruptedReceipt(job: JobRecord, s: Settlement, finishedAt: Date): Receipt {
  return {
    id: job.receiptId,
    callId: job.callId,
    principalId: job.principalId,
    createdAt: job.createdAt,
    finishedAt: finishedAt.toISOString(),
    outcome: 'failed',
    error: { code: 'job-interrupted' },
    model: job.model,
    task: job.task,
    usage: s.usage,
    billing: s.billing,
    chargedMicroUSD: s.chargedMicroUSD,
    pricedMicroUSD: s.pricedMicroUSD,
    reservedMicroUSD: s.reservedMicroUSD,
    countedTokens: s.countedTokens,
  };
}
