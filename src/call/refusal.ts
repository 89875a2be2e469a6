/**
 * Whether the guardrails refuse the call, and why: a block finding the policy decided, else a fail-closed
 * external classifier that failed (503 guardrail-classifier-unavailable; a block, being the more specific
 * answer, wins). Known once the policy has decided. The guard stage enforces it (after the meter, so a call
 * both over quota and blocked answers with the quota code, as the admission order says); the meter stage
 * reads it to create no job for a call that will be refused.
 */
import { GatewayError } from '../errors.js';
import type { Call } from './call.js';

export function guardrailRefusal(call: Call): GatewayError | null {
  if (call.decision!.guardrails.block.length > 0) return new GatewayError('guardrail-blocked');
  if ((call.scan?.failures ?? []).some((f) => f.failClosed)) return new GatewayError('guardrail-classifier-unavailable');
  return null;
}
