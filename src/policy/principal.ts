/**
 * The principal as the admission policy sees it: its valid rung, whether its rung expired, its consent to
 * the AUP in force, its approved scopes. The chat path's admission and the research status both ask the
 * policy with this same view.
 */
import type { PolicyPrincipal } from './engine.js';
import type { PrincipalRecord } from '../store/store.js';

export function policyPrincipal(p: PrincipalRecord, aupVersion: string, now = Date.now()): PolicyPrincipal {
  const rungValid = p.rung !== null && Date.parse(p.rung.expiresAt) > now;
  // In key order: the decision record carries it (src/call/policy-input.ts).
  return {
    // Consent counts for the AUP version in force; a new AUP version asks for consent again.
    aup: p.aup !== null && p.aup.version === aupVersion,
    id: p.id,
    rung: rungValid ? p.rung!.id : null,
    rungExpired: p.rung !== null && !rungValid,
    scopes: p.scopes.filter((s) => s.status === 'approved').map((s) => ({ id: s.id, tasks: s.tasks })),
  };
}
