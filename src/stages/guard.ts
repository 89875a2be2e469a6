/**
 * guard (admission step 5, enforced): a block decided by the policy refuses the call here, after the meter
 * — so a call both over quota and blocked answers with the quota code, as the admission order says — and
 * before anything is forwarded. Otherwise the redactions the policy decided are applied to a copy of the
 * request (messages, tool definitions, tool-call arguments, tool results), and the upstream body is built
 * from that copy with the upstream's model id and the sampling parameters dropped.
 *
 * An external classifier that failed and states `failClosed: true` refuses the call here too (503
 * guardrail-classifier-unavailable; a block finding, being the more specific answer, wins). A flagged call
 * goes on untouched and is recorded on the operator review list (src/reviews) before it is forwarded.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import type { Call } from './call.js';
import type { ChatRequest } from './validate.js';
import { upstreamBody } from '../compat/forwarded.js';
import type { Logger } from '../log.js';
import type { ReviewStore } from '../reviews/store.js';
import { newReceiptId } from '../receipts/receipt.js';

/** The review-list entry of a flagged call: ids, rule ids and places, never text. */
function reviewEntry(call: Call, rules: string[], at: Date) {
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

/**
 * Whether this stage will refuse the call, and why: a block finding, else a fail-closed classifier that
 * failed. Known once the policy has decided; the meter stage asks too (it creates no job for such a call).
 */
export function guardRefusal(call: Call): GatewayError | null {
  if (call.decision!.guardrails.block.length > 0) return new GatewayError('guardrail-blocked');
  if ((call.scan?.failures ?? []).some((f) => f.failClosed)) return new GatewayError('guardrail-classifier-unavailable');
  return null;
}

export function guard(log: Logger, reviews: ReviewStore) {
  return async function guard(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const actions = call.decision!.guardrails;
    const refused = guardRefusal(call);
    if (refused) {
      if (refused.code === 'guardrail-blocked') log.warn('guardrail.blocked', { callId: call.id, rules: actions.block });
      else log.warn('guardrail.classifier.refused', { callId: call.id, classifiers: (call.scan?.failures ?? []).filter((f) => f.failClosed).map((f) => f.classifier) });
      throw refused;
    }
    let request: ChatRequest = call.valid!.request;
    if (actions.redact.length > 0) request = call.runtime.guard.redact(request).request;
    if (actions.flag.length > 0) {
      log.info('guardrail.flagged', { callId: call.id, rules: actions.flag });
      await reviews.record(reviewEntry(call, actions.flag, new Date()));
    }
    call.forward = upstreamBody({ ...request, max_tokens: call.valid!.maxTokens }, call.model!.upstreamModel);
    await next();
  };
}
