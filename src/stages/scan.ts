/**
 * scan: the guardrail detectors (compiled once per runtime) read the request and report findings — rule
 * ids and where they matched, never the text. Scanning does not act: what each finding means (block, redact,
 * flag) is decided by the admission policy, in the admission order, and enforced by the guard stage.
 *
 * `classify` runs the built-in detectors and then every external classifier of the rules file (a moderation
 * endpoint), awaited here. A classifier that cannot answer is recorded on `call.scan.failures` and logged
 * (classifier id and reason, never text); its stated failure mode is applied by the guard stage, in the
 * admission order: fail closed refuses the call there, fail open lets it through without that verdict.
 *
 * Names are read too (src/guard/slots.ts), but a name cannot be masked without breaking the references
 * between a tool, its calls and the tool choice: a redact finding in one refuses the call here, 400
 * `secret-in-identifier`, before anything is reserved or forwarded.
 */
import type { Context, Next } from 'koa';
import type { Call } from '../call/call.js';
import type { Logger } from '../log.js';
import { GatewayError } from '../errors.js';

/** Locations of names: `messages[1].name`, `...tool_calls[0].function.name`, `tools[2].function.name`, `tool_choice.function.name`. */
const IDENTIFIER = /\.name$/;

export function scan(log: Logger) {
  return async function scan(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    // The intent model reads every call of a red-team model; a model the catalog does not know (refused with
    // 404 at admission) is read as a blue-team call, so unknown ids cannot buy model time.
    const team = call.runtime.models.get(call.valid!.request.model)?.team ?? 'blue';
    // The intent model's cached embeddings are the caller's own: a hit is faster than a miss, so a cache shared
    // between principals would tell one whether another had sent a text lately.
    call.scan = await call.runtime.guard.classify(call.valid!.request, { team, cacheScope: call.identity?.principal.id ?? '' });
    const named = call.scan.findings.find((f) => f.action === 'redact' && IDENTIFIER.test(f.where));
    if (named) {
      log.warn('guardrail.identifier.refused', { callId: call.id, rule: named.rule, where: named.where });
      throw new GatewayError(
        'secret-in-identifier',
        `${named.where} matches ${named.rule}; names are forwarded as they are and cannot be masked — remove the credential`,
        {
          param: named.where,
        },
      );
    }
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
