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
import { fromDenial, GatewayError, type ErrorCode } from '../errors.js';
import { policyInput } from '../call/policy-input.js';
import type { PrincipalRecord } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import type { Call } from '../call/call.js';
import { writeReceipt } from '../receipts/receipt.js';
import type { Decisions } from '../decisions/service.js';

/**
 * What the policy cannot see, asked only where it matters (src/billing/verification.ts): given the
 * principal and the first team-requirement denial (or null for a red-team call the policy allowed), a more
 * precise refusal code — a refused prepaid card, an expired screening — or null.
 */
export type RefineRefusal = (principal: PrincipalRecord, policyCode: string | null, runtime: Call['runtime']) => Promise<ErrorCode | null>;

export function admit(meter: Pick<Meter, 'record'>, refine?: RefineRefusal, decisions?: Pick<Decisions, 'record'>) {
  // The common case (admitted, blue team) does no I/O, so it goes on synchronously; only a refusal or a
  // red-team call, which may ask the billing store, takes the async path below.
  return function admit(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const input = policyInput(call);
    const decision = call.runtime.policy.decide(input);
    call.decision = decision;
    call.model = call.runtime.models.get(call.valid!.request.model);
    const first = decision.denials[0];
    const goesOn = !(first && first.step < 5) && !(decision.team === 'red' && refine);
    // A call that goes on at once reaches the meter stage next: its record may ride in the reservation.
    decisions?.record(call, input, goesOn);
    if (goesOn) return next();
    return refuseOrRefine(meter, call, next, refine);
  };
}

async function refuseOrRefine(meter: Pick<Meter, 'record'>, call: Call, next: Next, refine?: RefineRefusal): Promise<void> {
  const decision = call.decision!;
  const first = decision.denials[0];
  if (first && first.step < 5) {
    const refined = first.step === 3 && refine ? await refine(call.identity!.principal, first.code, call.runtime) : null;
    const code = refined ?? first.code;
    if (first.step >= 3) await writeReceipt(meter, call, 'refused', { code });
    throw refined ? new GatewayError(refined) : fromDenial(first.code, first.message, first.status);
  }
  if (decision.team === 'red' && refine) {
    const refined = await refine(call.identity!.principal, null, call.runtime);
    if (refined) {
      await writeReceipt(meter, call, 'refused', { code: refined });
      throw new GatewayError(refined);
    }
  }
  await next();
}
