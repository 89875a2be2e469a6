/**
 * The research status of a principal (GET /v1/research/status): `{status, reason, freeTier, trust, scopes}`.
 *
 * `status` is `eligible` when the principal can make at least one red-team call now, else `pending` with
 * `reason`, the stable code of what is missing next. It is decided by asking the admission policy itself
 * (the same compiled decision a call gets) for each served red-team model and each task the principal's
 * approved scopes list, then the refinements admission makes (prepaid card, screening) and the quota
 * (free allowance left, or credits). So status and admission cannot disagree about team requirements.
 *
 * `trust` is a projection: it states the rung, its evidence and their expiries as of `projectedAt`, and
 * may be relied on until `validUntil` (the configured projection, 60 seconds by default, or an earlier
 * expiry) — both re-stamped on every read.
 */
import type { Runtime } from '../config/compile.js';
import type { ErrorCode } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import { policyPrincipal } from '../policy/principal.js';
import type { PrincipalRecord } from '../store/store.js';
import type { ApplicationRecord, BillingStore, CheckRecord } from './store.js';
import { validRung, verificationRefusal } from './verification.js';

export interface ScopeStatus {
  id: string;
  status: 'approved' | 'pending' | 'refused' | 'revoked';
  tasks: string[];
  /** The application that asked for it, when one did. */
  applicationId?: string;
  /** The operator's reason, for a refused application. */
  note?: string | null;
}

export interface ResearchStatus {
  status: 'eligible' | 'pending';
  reason: string | null;
  freeTier: { unit: 'requests' | 'tokens'; perDay: number; used: number; remaining: number; resetsAt: string };
  trust: {
    rung: string | null;
    level: string | null;
    evidence: { kind: string; reference: string | null; source: string } | null;
    verifiedAt: string | null;
    expiresAt: string | null;
    screening: { status: 'clear' | 'expired' | 'not-recorded' | 'not-required'; checkedAt: string | null; expiresAt: string | null };
    projectedAt: string;
    validUntil: string;
  };
  scopes: ScopeStatus[];
}

function nextUtcMidnight(now: number): string {
  const d = new Date(now);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).toISOString();
}

/** Which team requirement fails first, by the policy, for the best red-team call the principal could make. */
function teamReason(runtime: Runtime, p: PrincipalRecord, now: number): string | null {
  const principal = policyPrincipal(p, runtime.aupVersion, now);
  const red = runtime.modelList.filter((m) => m.team === 'red');
  if (red.length === 0) return 'red-team-not-offered';
  const served = red.filter((m) => m.available);
  if (served.length === 0) return 'route-not-configured';
  const tasks = [...new Set([...principal.scopes.flatMap((s) => s.tasks), runtime.defaultTask])];
  let first: string | null = null;
  for (const model of served) {
    for (const task of tasks.filter((t) => model.tasks.has(t))) {
      const d = runtime.policy.decide({ principal, model: model.id, task, scopeId: null, findings: [] });
      const denial = d.denials.find((x) => x.step < 5);
      if (!denial) return null;
      first ??= denial.code;
    }
  }
  if (first === 'verification-required' && p.rung !== null) return 'verification-expired';
  return first ?? 'task-not-offered';
}

function evidenceOf(
  rungSource: string,
  checks: Partial<Record<string, CheckRecord>>,
  rung: string,
): { kind: string; reference: string | null; source: string } {
  if (rung === 'card' && checks['card']?.state === 'verified' && rungSource === 'card-webhook')
    return { kind: 'card', reference: checks['card'].evidenceRef, source: rungSource };
  if (rung === 'identity' && checks['identity']?.state === 'verified' && rungSource === 'identity-webhook') {
    return { kind: 'document-and-selfie', reference: checks['identity'].evidenceRef, source: rungSource };
  }
  return { kind: rungSource === 'operator' ? 'operator-review' : rungSource, reference: null, source: rungSource };
}

/** Approved scopes, then what applications asked for that is not approved (pending or refused). */
function scopeList(p: PrincipalRecord, applications: ApplicationRecord[]): ScopeStatus[] {
  const out: ScopeStatus[] = p.scopes.map((s) => ({ id: s.id, status: s.status, tasks: [...s.tasks] }));
  const approved = new Set(p.scopes.filter((s) => s.status === 'approved').map((s) => s.id));
  // The latest application per scope id speaks for it.
  const latest = new Map<string, ApplicationRecord>();
  for (const a of applications) latest.set(a.request.scope.id, a);
  for (const a of latest.values()) {
    if (a.status === 'approved') {
      const entry = out.find((s) => s.id === a.request.scope.id);
      if (entry) entry.applicationId = a.id;
      continue;
    }
    if (approved.has(a.request.scope.id) && a.status === 'refused') continue;
    const entry: ScopeStatus = {
      id: a.request.scope.id,
      status: a.status === 'submitted' ? 'pending' : 'refused',
      tasks: [...a.request.scope.tasks],
      applicationId: a.id,
    };
    if (a.status === 'refused') entry.note = a.decisionNote;
    out.push(entry);
  }
  return out;
}

export async function researchStatus(
  deps: { billing: BillingStore; meter: Meter },
  runtime: Runtime,
  p: PrincipalRecord,
  now = Date.now(),
): Promise<ResearchStatus> {
  const [checks, usage, balance, applications] = await Promise.all([
    deps.billing.checks(p.id),
    deps.meter.usage(p.id, deps.meter.today()),
    deps.meter.status(p.id),
    deps.billing.applicationsOf(p.id),
  ]);
  const free = runtime.bundle.rungs.data.freeAllowance;
  const used = usage.freeUsed + usage.freeHeld;
  const freeTier = { unit: free.unit, perDay: free.perDay, used, remaining: Math.max(0, free.perDay - used), resetsAt: nextUtcMidnight(now) };

  const rung = validRung(p, now);
  const screened = rung !== null && runtime.verification.screenedRungs.includes(rung);
  const sc = checks.screening;
  const screening: ResearchStatus['trust']['screening'] = !screened
    ? { status: 'not-required', checkedAt: null, expiresAt: null }
    : !sc || sc.state !== 'verified'
      ? { status: 'not-recorded', checkedAt: null, expiresAt: null }
      : { status: sc.expiresAt && Date.parse(sc.expiresAt) <= now ? 'expired' : 'clear', checkedAt: new Date(sc.at).toISOString(), expiresAt: sc.expiresAt };

  const projection = runtime.verification.trustProjectionSeconds * 1000;
  const limits = [now + projection];
  if (rung !== null) limits.push(Date.parse(p.rung!.expiresAt));
  if (screening.status === 'clear' && screening.expiresAt) limits.push(Date.parse(screening.expiresAt));
  const trust: ResearchStatus['trust'] = {
    rung,
    level: rung ? (runtime.rungs.get(rung)?.level ?? null) : null,
    evidence: rung ? evidenceOf(p.rung!.source, checks, rung) : null,
    verifiedAt: rung ? p.rung!.grantedAt : null,
    expiresAt: p.rung?.expiresAt ?? null,
    screening,
    projectedAt: new Date(now).toISOString(),
    validUntil: new Date(Math.max(now, Math.min(...limits))).toISOString(),
  };

  let reason: string | null = teamReason(runtime, p, now);
  const refined: ErrorCode | null = await verificationRefusal(deps.billing, runtime, p, reason, now);
  if (refined) reason = refined;
  if (reason === null) {
    const ai = balance.balances.find((b) => b.scope === 'ai');
    if (freeTier.remaining === 0 && (ai?.availableMicroUSD ?? 0) <= 0)
      reason = (ai?.grantedMicroUSD ?? 0) > 0 ? 'insufficient-credits' : 'daily-allowance-exhausted';
  }
  return { status: reason === null ? 'eligible' : 'pending', reason, freeTier, trust, scopes: scopeList(p, applications) };
}
