/**
 * scan: the guardrail detectors (compiled once per runtime) read the request and report findings — rule
 * ids and where they matched, never the text. Scanning does not act: what each finding means (block, redact,
 * flag) is decided by the admission policy, in the admission order, and enforced by the guard stage.
 *
 * `classify` runs the built-in detectors and then every external classifier of the rules file (a moderation
 * endpoint), awaited here. A classifier that cannot answer is recorded on `call.scan.failures` and logged
 * (classifier id and reason, never text); its stated failure mode is applied by the guard stage, in the
 * admission order: fail closed refuses the call there, fail open lets it through without that verdict.
 */
import type { Context, Next } from 'koa';
import type { Call } from './call.js';
import type { Logger } from '../log.js';

export function scan(log: Logger) {
  return async function scan(ctx: Context, next: Next): Promise<void> {
    const call: Call = ctx.state.call;
    call.scan = await call.runtime.guard.classify(call.valid!.request);
    for (const f of call.scan.failures ?? []) {
      log.warn('guardrail.classifier.failed', {
        callId: call.id,
        classifier: f.classifier,
        reason: f.reason,
        // fail-closed: refused by the guard stage (unless refused earlier); fail-open: goes on without the verdict.
        mode: f.failClosed ? 'fail-closed' : 'fail-open',
      });
    }
    await next();
  };
}
