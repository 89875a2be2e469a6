/**
 * The operator review list's entry for a flagged call (src/reviews): ids, rule ids and where they matched,
 * never text.
 */
import type { Call } from './call.js';
import { newReceiptId } from './receipt.js';

export function reviewEntry(call: Call, rules: string[], at: Date) {
  const flagged = new Set(rules);
  return {
    callId: call.id,
    principalId: call.identity!.principal.id,
    receiptId: call.receiptId ?? newReceiptId(call.id),
    rules,
    findings: (call.scan?.findings ?? []).filter((f) => flagged.has(f.rule)).map((f) => ({ rule: f.rule, detector: f.detector, where: f.where })),
    model: call.model!.id,
    task: call.task!,
    at: at.toISOString(),
    day: call.reservation?.day ?? at.toISOString().slice(0, 10),
  };
}
