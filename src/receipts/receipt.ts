/**
 * Receipts: the durable record of a call that reached admission step 3 or later — admitted, refused by
 * team rules, quota or guardrails, or failed upstream. A receipt names the versions the call was decided
 * under, so a compliance reviewer can match it to the rules served by GET /v1/secure. It holds rule ids and
 * counts, never prompt text or tokens. Written once per call id.
 */
import type { Call } from '../stages/call.js';
import type { Store, Receipt } from '../store/store.js';

export type Outcome = 'answered' | 'refused' | 'failed';

export function newReceiptId(callId: string): string {
  return `rcpt_${callId}`;
}

export function buildReceipt(call: Call, outcome: Outcome, error?: { code: string }): Receipt {
  const principal = call.identity!.principal;
  const d = call.decision;
  const v = call.runtime.versions;
  const s = call.settlement;
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
      versions: { policy: v.policy, rules: v.rules, catalog: v.catalog, guardrails: v.guardrails, config: v.config },
    },
    guardrails: d?.guardrails ?? { block: [], redact: [], flag: [] },
    upstream: call.answer ? { model: call.model?.upstreamModel, echoedModel: call.answer.model } : null,
    usage: s?.usage ?? null,
    billing: s?.billing ?? null,
    chargedMicroUSD: s?.chargedMicroUSD ?? 0,
  };
}

export async function writeReceipt(store: Store, call: Call, outcome: Outcome, error?: { code: string }): Promise<string> {
  const receipt = buildReceipt(call, outcome, error);
  await store.putReceipt(receipt);
  call.receiptId = receipt.id;
  return receipt.id;
}
