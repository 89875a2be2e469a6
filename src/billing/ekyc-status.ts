/**
 * The verification state of GET /v1/research/ekyc/status: one overall `state` (`none`, `pending`,
 * `verified`, `refused` with its `reason`, `expired`) for the principal's rung, and the card and identity
 * checks behind it, each with the processor's evidence reference and expiry — never the evidence.
 */
import type { Runtime } from '../config/compile.js';
import type { PrincipalRecord } from '../store/store.js';
import type { CheckKind, CheckRecord } from './store.js';
import { validRung } from './verification.js';

type State = 'none' | 'pending' | 'verified' | 'refused' | 'expired';

interface CheckView {
  state: State;
  reason: string | null;
  evidenceRef: string | null;
  reportedAt: string | null;
  expiresAt: string | null;
}

function view(c: CheckRecord | undefined, now: number): CheckView {
  if (!c) return { state: 'none', reason: null, evidenceRef: null, reportedAt: null, expiresAt: null };
  const expired = c.state === 'verified' && c.expiresAt !== null && Date.parse(c.expiresAt) <= now;
  return {
    state: expired ? 'expired' : c.state,
    reason: c.reason,
    evidenceRef: c.evidenceRef,
    reportedAt: new Date(Math.max(0, c.at)).toISOString(),
    expiresAt: c.expiresAt,
  };
}

export function ekycState(runtime: Runtime, p: PrincipalRecord, checks: Partial<Record<CheckKind, CheckRecord>>, now = Date.now()) {
  const card = view(checks.card, now);
  const identity = view(checks.identity, now);
  const rung = validRung(p, now);
  let state: State;
  let reason: string | null = null;
  if (rung !== null) state = 'verified';
  else if (p.rung !== null) state = 'expired';
  else if (card.state === 'pending' || identity.state === 'pending') state = 'pending';
  else if (card.state === 'refused') {
    state = 'refused';
    reason = card.reason;
  } else state = 'none';
  // An expired rung is still named (with state `expired`), so the person sees what to renew.
  const named = rung ?? p.rung?.id ?? null;
  return {
    state,
    reason,
    rung: named,
    level: named ? (runtime.rungs.get(named)?.level ?? null) : null,
    verifiedAt: p.rung?.grantedAt ?? null,
    expiresAt: p.rung?.expiresAt ?? null,
    checks: { card, identity },
  };
}
