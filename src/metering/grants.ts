/**
 * Grants: the only ways allowance reaches a balance — an operator's credit grant, a plan (which credits its
 * monthly AI credits), and the paid-invoice webhook, which calls the same functions with the invoice's id
 * (and what was paid, so a dispute can take back its share).
 * Every grant is idempotent on an operation id: applied once, and a repeat answers what was applied then. The
 * same id with a different grant is refused (409 `operation-id-reused`), never silently ignored.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { BillingDoc } from '../config/types.js';
import type { GrantRecord, GrantResult, Meter } from './meter.js';

const OPERATION_ID = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,199}$/;

function operationId(given: string | undefined, fallback: () => string): string {
  if (given === undefined) return fallback();
  if (!OPERATION_ID.test(given))
    throw new GatewayError('invalid-request', 'operationId must be 1-200 characters of A-Z a-z 0-9 . _ : @ -, starting with a letter or digit');
  return given;
}

function same(a: GrantRecord, b: Omit<GrantRecord, 'at' | 'source'>): boolean {
  return a.principalId === b.principalId && a.kind === b.kind && a.microUSD === b.microUSD && (a.plan ?? null) === (b.plan ?? null);
}

async function apply(meter: Meter, g: Omit<GrantRecord, 'at'>): Promise<GrantResult> {
  const result = await meter.grant(g);
  if (!result.applied && !same(result.grant, g)) {
    throw new GatewayError(
      'operation-id-reused',
      `operation ${g.operationId} was applied before as a different grant (${result.grant.kind}, ${result.grant.microUSD} micro-USD)`,
    );
  }
  return result;
}

/** Credits `microUSD` (a positive integer) to the principal's AI balance; a fresh operation id unless given. */
export function grantCredits(
  meter: Meter,
  principalId: string,
  microUSD: unknown,
  opId: string | undefined,
  source: string,
  paidCents?: number,
): Promise<GrantResult> {
  if (typeof microUSD !== 'number' || !Number.isSafeInteger(microUSD) || microUSD <= 0) {
    throw new GatewayError('invalid-request', 'microUSD must be a positive integer (micro-USD: 1 USD = 1000000)');
  }
  const operationId_ = operationId(opId, () => `credits:${randomUUID()}`);
  return apply(meter, { operationId: operationId_, principalId, kind: 'credits', microUSD, source, ...(paidCents ? { paidCents } : {}) });
}

/**
 * Moves the principal to a plan of the billing catalog and credits its monthly AI credits (or `microUSD`,
 * less, where an invoice paid only part of the price). Without an operation id the grant is keyed by
 * principal, plan and UTC month: setting the same plan again in the same month credits nothing more.
 */
export function setPlan(
  meter: Meter,
  billing: BillingDoc,
  principalId: string,
  planId: unknown,
  opId: string | undefined,
  source: string,
  paidCents?: number,
  microUSD?: number,
): Promise<GrantResult> {
  const plan = typeof planId === 'string' ? billing.plans.find((p) => p.id === planId.toLowerCase()) : undefined;
  if (!plan)
    throw new GatewayError('unknown-plan', `no plan ${JSON.stringify(planId)} in the billing catalog; plans: ${billing.plans.map((p) => p.id).join(', ')}`);
  const operationId_ = operationId(opId, () => `plan:${principalId}:${plan.id}:${meter.today().slice(0, 7)}`);
  return apply(meter, {
    operationId: operationId_,
    principalId,
    kind: 'plan',
    microUSD: Math.min(microUSD ?? plan.aiCreditsMicroUSD, plan.aiCreditsMicroUSD),
    plan: plan.id,
    source,
    ...(paidCents ? { paidCents } : {}),
  });
}
