/**
 * `policy.requireImpactReport` on every reload path. The admin API refuses such a reload up front (409
 * `impact-report-required`, admin-routes.ts); this gate holds the same line for the reloads no route sees
 * — a change on disk the file watcher picked up, SIGHUP, a supervisor's request — by refusing, before the
 * swap, a runtime whose policy or rules differ from the live ones when no impact report was made for
 * exactly them. The live runtime keeps serving and the refusal is logged with the reason.
 *
 * The live runtime's setting is the one obeyed: turning the requirement off is a reload of its own that
 * changes no policy or rules, so it cannot carry an unreported rule change in with it.
 */
import type { Runtime } from '../config/compile.js';
import { fingerprintOf } from './candidate.js';
import type { DecisionStore } from './store.js';

/** A runtime's policy-and-rules fingerprint, as a candidate's is made from the same files. */
export function runtimeFingerprint(runtime: Runtime): string {
  const b = runtime.bundle;
  return fingerprintOf(runtime.policy.sha256, b.models.sha256, b.rungs.sha256, b.guardrails.sha256);
}

/** Why `next` may not replace `current` (null when it may). */
export async function impactReportProblem(store: Pick<DecisionStore, 'reported'>, current: Runtime, next: Runtime): Promise<string | null> {
  if (!current.gateway.policy?.requireImpactReport) return null;
  const fingerprint = runtimeFingerprint(next);
  if (fingerprint === runtimeFingerprint(current) || (await store.reported(fingerprint))) return null;
  const v = next.versions;
  return `impact-report-required: the policy or rules on disk (policy ${next.policy.version}, rules ${v.rules}, guardrails ${v.guardrails}) differ from the live ones and no impact report was made for them (policy.requireImpactReport): GET /admin/policy/impact (or portcullis policy impact) first; the live ones keep serving`;
}
