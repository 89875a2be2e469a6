/**
 * Research applications: a principal asks for a scope (with its tasks) under a verification mode; an
 * operator approves or refuses it (admin API, `portcullis admin application ...`). Approval approves the
 * scope with its tasks (added to the tasks the scope already has), and for the business (L3) and
 * contracted (L4) modes grants that rung and records the AML/CTF screening the operator's review stands
 * for — those rungs are never reached by the principal alone.
 *
 * A decision is made once (the store decides atomically); approving an approved application again
 * re-applies its effects (each is idempotent), so an approval cut off half-way is finished by repeating
 * it. Refusing an approved one, or approving a refused one, is 409 `application-decided`.
 */
import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors.js';
import { approveScope, grantRung, requirePrincipal } from '../auth/principals.js';
import type { Runtime } from '../config/compile.js';
import type { BillingDeps } from './deps.js';
import { checkShape } from './schemas.js';
import type { ApplicationRecord } from './store.js';
import { screeningCleared } from './verification.js';

/** Rungs that an approved application grants (the others come from the card and identity checks). */
const REVIEWED_MODES = new Set(['business', 'contracted']);

export function checkTasks(runtime: Runtime, tasks: string[], field: string): void {
  const unknown = tasks.filter((t) => !runtime.tasks[t]);
  if (unknown.length > 0)
    throw new GatewayError('invalid-request', `${field}: unknown task ${JSON.stringify(unknown[0])}; tasks are ${Object.keys(runtime.tasks).join(', ')}`);
}

/**
 * Stores a principal's application once it validates. `admit` (the per-account limit, see routes/research.ts)
 * runs after validation and before anything is stored, so a refused application leaves nothing behind and
 * an invalid one uses none of the allowance.
 */
export async function submitApplication(
  d: BillingDeps,
  principalId: string,
  body: unknown,
  admit: () => Promise<void> = async () => {},
): Promise<ApplicationRecord> {
  const runtime = d.holder.current;
  const request = checkShape<ApplicationRecord['request']>('application', body);
  if (request.policyVersion !== runtime.aupVersion) {
    throw new GatewayError(
      'policy-version-mismatch',
      `policyVersion ${JSON.stringify(request.policyVersion)} is not the acceptable-use policy in force; the current version is ${JSON.stringify(runtime.aupVersion)}`,
    );
  }
  checkTasks(runtime, request.scope.tasks, 'scope.tasks');
  if (!runtime.rungs.has(request.verificationMode))
    throw new GatewayError('invalid-request', `verificationMode: no rung ${JSON.stringify(request.verificationMode)}`);
  await admit();
  const app: ApplicationRecord = {
    id: `app_${randomUUID()}`,
    principalId,
    status: 'submitted',
    submittedAt: new Date().toISOString(),
    decidedAt: null,
    decisionNote: null,
    request,
  };
  await d.billing.putApplication(app);
  await recordConsent(d, principalId, app.submittedAt);
  return app;
}

/**
 * An application is explicit consent to the AUP version in force (`consent.acceptableUse` under the
 * current `policyVersion`), so it renews the consent of a verified principal after the AUP changed —
 * without it only a new verification would. Consent is stored with the rung (Store.setRung keeps the rung
 * it is given): the principal is re-read just before, and a principal without a rung gets its consent with
 * its card, as verification records it.
 */
async function recordConsent(d: BillingDeps, principalId: string, at: string): Promise<void> {
  const version = d.holder.current.aupVersion;
  const p = await requirePrincipal(d.store, principalId);
  if (p.rung === null || p.aup?.version === version) return;
  await d.store.setRung(principalId, p.rung, { version, at });
}

async function requireApplication(d: BillingDeps, id: string): Promise<ApplicationRecord> {
  const app = await d.billing.getApplication(id);
  if (!app) throw new GatewayError('application-not-found');
  return app;
}

async function applyApproval(d: BillingDeps, app: ApplicationRecord): Promise<void> {
  const runtime = d.holder.current;
  const { id: scope, tasks } = app.request.scope;
  if (REVIEWED_MODES.has(app.request.verificationMode)) {
    // The screening first: a screened rung is never held without it, even for a moment.
    await screeningCleared(d, app.principalId, `application:${app.id}`);
    await grantRung(d.store, runtime, app.principalId, app.request.verificationMode, 'operator-application');
  }
  const p = await requirePrincipal(d.store, app.principalId);
  const existing = p.scopes.find((s) => s.id === scope && s.status === 'approved')?.tasks ?? [];
  await approveScope(d.store, runtime, app.principalId, scope, [...new Set([...existing, ...tasks])]);
}

export async function approveApplication(d: BillingDeps, id: string, note: string | null): Promise<ApplicationRecord> {
  const app = await requireApplication(d, id);
  const r = await d.billing.decideApplication(id, 'approved', note, new Date().toISOString());
  if (!r) throw new GatewayError('application-not-found');
  if (r.record.status !== 'approved') throw new GatewayError('application-decided', `the application was ${r.record.status} already`);
  await applyApproval(d, { ...app, ...r.record });
  return r.record;
}

export async function refuseApplication(d: BillingDeps, id: string, reason: string): Promise<ApplicationRecord> {
  await requireApplication(d, id);
  const r = await d.billing.decideApplication(id, 'refused', reason, new Date().toISOString());
  if (!r) throw new GatewayError('application-not-found');
  if (r.record.status !== 'refused') throw new GatewayError('application-decided', `the application was ${r.record.status} already`);
  return r.record;
}
