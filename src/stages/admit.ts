/**
 * admit (admission steps 2, 3 and 5 as one decision): the compiled Rego policy decides model, route, team
 * requirements (verification, AUP, scope, task, band) and the guardrail actions for the findings, from a
 * small input built once here. The first denial in admission order wins. Quota (step 4) is decided by the
 * meter, atomically in the store, so a guardrail denial (step 5) is enforced only after the meter has had
 * its say — the guard stage does that.
 *
 * A call refused at step 3 or later leaves a receipt; one refused at step 2 (unknown model, route not
 * configured) spends nothing and leaves none.
 */
import type { Context, Next } from 'koa';
import { fromDenial } from '../errors.js';
import type { PolicyInput } from '../policy/engine.js';
import type { Meter } from '../metering/meter.js';
import type { Call } from './call.js';
import { writeReceipt } from '../receipts/receipt.js';

/** The policy input: small and flat (architecture: built once per call). */
export function policyInput(call: Call, now = Date.now()): PolicyInput {
  const p = call.identity!.principal;
  const rungValid = p.rung !== null && Date.parse(p.rung.expiresAt) > now;
  return {
    principal: {
      id: p.id,
      rung: rungValid ? p.rung!.id : null,
      rungExpired: p.rung !== null && !rungValid,
      // Consent counts for the AUP version in force; a new AUP version asks for consent again.
      aup: p.aup !== null && p.aup.version === call.runtime.aupVersion,
      scopes: p.scopes.filter((s) => s.status === 'approved').map((s) => ({ id: s.id, tasks: s.tasks })),
    },
    model: call.valid!.request.model,
    task: call.task!,
    scopeId: call.scopeId,
    findings: call.scan?.ruleIds ?? [],
  };
}

export function admit(meter: Pick<Meter, 'record'>) {
  return async function admit(ctx: Context, next: Next): Promise<void> {
    const call: Call = ctx.state.call;
    const decision = call.runtime.policy.decide(policyInput(call));
    call.decision = decision;
    call.model = call.runtime.models.get(call.valid!.request.model);
    const first = decision.denials[0];
    if (first && first.step < 5) {
      if (first.step >= 3) await writeReceipt(meter, call, 'refused', { code: first.code });
      throw fromDenial(first.code, first.message);
    }
    await next();
  };
}
