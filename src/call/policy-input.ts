/**
 * The admission policy's input for a call: small and flat, built once per call from what identify,
 * validate and scan wrote (the principal as the policy sees it, the model, the task, the named scope, the
 * guardrail findings' rule ids).
 */
import type { PolicyInput } from '../policy/engine.js';
import { policyPrincipal } from '../policy/principal.js';
import type { Call } from './call.js';

export function policyInput(call: Call, now = Date.now()): PolicyInput {
  // In key order: the decision record carries it, and its canonical text has nothing to reorder then.
  return {
    findings: call.scan?.ruleIds ?? [],
    model: call.valid!.request.model,
    principal: policyPrincipal(call.identity!.principal, call.runtime.aupVersion, now),
    scopeId: call.scopeId,
    task: call.task!,
  };
}
