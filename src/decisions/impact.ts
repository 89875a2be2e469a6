/**
 * The impact of a policy change before it goes live: the recorded live decisions of a period are decided
 * again under a candidate (candidate.ts), each with the route availability it was recorded with, and every
 * decision whose result would differ is reported — counts by answer (`admitted -> guardrail-blocked`), per
 * principal (by hash, never the id), and each change with its receipt, so an author can look at examples.
 * `portcullis policy impact` prints it, and GET /admin/policy/impact serves it for the candidate on the
 * gateway's own disk (what a reload would load).
 *
 * Counts are of calls that left a receipt. Some decisions leave none — a call refused at step 2 (unknown
 * model, route not configured), an identical request answered from its finished job (no new call) — and a
 * report naming `rcpt_<call id>` for them would name receipts that do not exist: they are kept out of the
 * counts and the changes, and counted apart in `withoutReceipt`.
 */
import type { PolicyData } from '../policy/engine.js';
import type { Candidate } from './candidate.js';
import { principalHash, type DecisionRecord } from './record.js';
import { answerOf, decisionChanges } from './shadow.js';
import { availability } from './versions.js';

interface ImpactChange {
  decision_id: string;
  receipt_id: string;
  timestamp: string;
  principal: string;
  before: string;
  after: string;
  /** The fields of the decision that differ: allow, denials, team, band, scope, guardrails. */
  fields: string[];
}

export interface ImpactReport {
  object: 'policy.impact';
  candidate: { fingerprint: string; policy: { version: string; sha256: string }; documents: Candidate['documents'] };
  period: { from: string; to: string };
  /** Live decisions replayed. */
  decisions: number;
  /** Of them, those the candidate would decide otherwise. */
  changed: number;
  /** Decisions whose data document could not be had (not in the version history): not replayed. */
  skipped: number;
  /** `<recorded answer> -> <candidate's answer>` (an answer is `admitted` or the first denial code) -> count. */
  byCode: Record<string, number>;
  /** Principal hash -> decisions of theirs that would change. */
  byPrincipal: Record<string, number>;
  /** The first ten changes, oldest first. */
  examples: ImpactChange[];
  /** Every change, oldest first. */
  changes: ImpactChange[];
  /** Decisions whose call left no receipt (step-2 refusals, repeats answered from a finished job): not counted above. */
  withoutReceipt: { decisions: number; changed: number; byCode: Record<string, number> };
}

/** Of a page of records, the ids of the decisions whose call left a receipt. */
export type ReceiptsOf = (page: readonly DecisionRecord[]) => Promise<Set<string>>;

const EXAMPLES = 10;

export async function impactOf(
  pages: AsyncIterable<readonly DecisionRecord[]> | Iterable<readonly DecisionRecord[]>,
  candidate: Candidate,
  dataFor: (sha256: string) => Promise<PolicyData | null>,
  period: { from: number; to: number },
  receiptsOf: ReceiptsOf,
): Promise<ImpactReport> {
  const data = new Map<string, Promise<PolicyData | null>>();
  const changes: ImpactChange[] = [];
  const without = { decisions: 0, changed: 0, byCode: {} as Record<string, number> };
  let skipped = 0;
  let replayed = 0;
  for await (const page of pages) {
    const live = page.filter((r) => r.labels['kind'] === 'live');
    const receipted = await receiptsOf(live);
    for (const r of live) {
      const hasReceipt = receipted.has(r.decision_id);
      if (hasReceipt) replayed += 1;
      else without.decisions += 1;
      const sha = r.documents['policy-data'];
      const recorded = sha ? await (data.get(sha) ?? data.set(sha, dataFor(sha)).get(sha)!) : null;
      if (!recorded) {
        if (hasReceipt) skipped += 1;
        continue;
      }
      const { evaluator } = await candidate.evaluatorFor(availability(recorded));
      const after = evaluator.decide(r.input);
      const fields = decisionChanges(r.result, after);
      if (fields.length === 0) continue;
      if (!hasReceipt) {
        const k = `${answerOf(r.result)} -> ${answerOf(after)}`;
        without.changed += 1;
        without.byCode[k] = (without.byCode[k] ?? 0) + 1;
        continue;
      }
      changes.push({
        decision_id: r.decision_id,
        receipt_id: `rcpt_${r.call_id}`,
        timestamp: r.timestamp,
        principal: principalHash(r.input.principal?.id),
        before: answerOf(r.result),
        after: answerOf(after),
        fields,
      });
    }
  }
  const byCode: Record<string, number> = {};
  const byPrincipal: Record<string, number> = {};
  for (const c of changes) {
    const k = `${c.before} -> ${c.after}`;
    byCode[k] = (byCode[k] ?? 0) + 1;
    byPrincipal[c.principal] = (byPrincipal[c.principal] ?? 0) + 1;
  }
  return {
    object: 'policy.impact',
    candidate: { fingerprint: candidate.fingerprint, policy: candidate.policy, documents: candidate.documents },
    period: { from: new Date(period.from).toISOString(), to: new Date(period.to).toISOString() },
    decisions: replayed - skipped,
    changed: changes.length,
    skipped,
    byCode,
    byPrincipal,
    examples: changes.slice(0, EXAMPLES),
    changes,
    withoutReceipt: without,
  };
}

/** The report for a terminal. */
export function impactText(r: ImpactReport, label: string): string {
  const d = r.candidate.documents;
  const lines = [
    `impact of ${label}: policy ${r.candidate.policy.version}, rules ${d.rungs.version}, guardrails ${d.guardrails.version}, catalog ${d.catalog.version}`,
    `period ${r.period.from} to ${r.period.to}: ${r.decisions} decision(s) replayed, ${r.changed} would change${r.skipped ? ` (${r.skipped} skipped: their data is not in the version history)` : ''}`,
  ];
  const w = r.withoutReceipt;
  if (w.decisions > 0)
    lines.push(
      `not counted: ${w.decisions} decision(s) whose call left no receipt (step-2 refusals, repeats answered from a finished job), ${w.changed} of them would change`,
    );
  if (r.changed > 0) {
    lines.push('by code:');
    for (const [k, n] of Object.entries(r.byCode).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) lines.push(`  ${k}  ${n}`);
    lines.push('by principal (hash):');
    for (const [k, n] of Object.entries(r.byPrincipal).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) lines.push(`  ${k}  ${n}`);
    lines.push('examples:');
    for (const c of r.examples) lines.push(`  ${c.timestamp} ${c.receipt_id} principal ${c.principal}: ${c.before} -> ${c.after} (${c.fields.join(', ')})`);
  }
  return lines.join('\n');
}
