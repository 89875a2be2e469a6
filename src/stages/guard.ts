/**
 * guard (admission step 5, enforced): a block decided by the policy refuses the call here, after the meter
 * — so a call both over quota and blocked answers with the quota code, as the admission order says — and
 * before anything is forwarded. Otherwise the redactions the policy decided are applied to a copy of the
 * request (messages, tool definitions, tool-call arguments, tool results), and the upstream body is built
 * from that copy with the upstream's model id and the sampling parameters dropped.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import type { Call } from './call.js';
import { upstreamBody, type ChatRequest } from './validate.js';
import type { Logger } from '../log.js';

export function guard(log: Logger) {
  return async function guard(ctx: Context, next: Next): Promise<void> {
    const call: Call = ctx.state.call;
    const actions = call.decision!.guardrails;
    if (actions.block.length > 0) {
      log.warn('guardrail.blocked', { callId: call.id, rules: actions.block });
      throw new GatewayError('guardrail-blocked');
    }
    let request: ChatRequest = call.valid!.request;
    if (actions.redact.length > 0) request = call.runtime.guard.redact(request).request as ChatRequest;
    if (actions.flag.length > 0) log.info('guardrail.flagged', { callId: call.id, rules: actions.flag });
    call.forward = upstreamBody(call.valid!, call.model!.upstreamModel, request.messages, request.tools);
    await next();
  };
}
