/**
 * scan: the guardrail detectors (compiled once per runtime) read the request and report findings — rule
 * ids and where they matched, never the text. Scanning does not act: what each finding means (block, redact,
 * flag) is decided by the admission policy, in the admission order, and enforced by the guard stage.
 */
import type { Context, Next } from 'koa';

export function scan() {
  return async function scan(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call;
    call.scan = call.runtime.guard.scan(call.valid!.request);
    await next();
  };
}
