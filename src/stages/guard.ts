/**
 * guard (admission step 5, enforced): a block decided by the policy refuses the call here, after the meter
 * — so a call both over quota and blocked answers with the quota code, as the admission order says — and
 * before anything is forwarded. Otherwise the redactions the policy decided are applied to a copy of the
 * request (messages, tool definitions, tool-call arguments, tool results), and the upstream body is built
 * from that copy with the upstream's model id and the sampling parameters dropped.
 *
 * An external classifier that failed and states `failClosed: true` refuses the call here too (503
 * guardrail-classifier-unavailable; a block finding, being the more specific answer, wins; the rule is
 * src/call/refusal.ts). A flagged call goes on untouched and is recorded on the operator review list
 * (src/reviews; its entry is src/call/review-entry.ts) before it is forwarded.
 */
import type { Context, Next } from 'koa';
import type { Call } from '../call/call.js';
import { guardrailRefusal } from '../call/refusal.js';
import { reviewEntry } from '../call/review-entry.js';
import { upstreamRequest, type ChatRequest } from '../openai/request.js';
import type { Logger } from '../log.js';
import type { ReviewStore } from '../reviews/store.js';

export function guard(log: Logger, reviews: ReviewStore) {
  // Not async: only a flagged call waits (for its review entry); every other call goes on in the same tick.
  return function guard(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const actions = call.decision!.guardrails;
    const refused = guardrailRefusal(call);
    if (refused) {
      if (refused.code === 'guardrail-blocked') log.warn('guardrail.blocked', { callId: call.id, rules: actions.block });
      else
        log.warn('guardrail.classifier.refused', {
          callId: call.id,
          classifiers: (call.scan?.failures ?? []).filter((f) => f.failClosed).map((f) => f.classifier),
        });
      throw refused;
    }
    let request: ChatRequest = call.valid!.request;
    if (actions.redact.length > 0) request = call.runtime.guard.redact(request).request;
    if (actions.flag.length > 0) {
      log.info('guardrail.flagged', { callId: call.id, rules: actions.flag });
      return reviews.record(reviewEntry(call, actions.flag, new Date())).then(() => forward(call, request, next));
    }
    return forward(call, request, next);
  };
}

/** The upstream body, built from the (redacted) request; then the next stage. */
function forward(call: Call, request: ChatRequest, next: Next): Promise<void> {
  call.forward = upstreamRequest(request, call.valid!.maxTokens, call.model!.upstreamModel);
  return next();
}
