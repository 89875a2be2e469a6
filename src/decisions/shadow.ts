/**
 * Shadow evaluation: a candidate (`policy.shadow`, a folder laid out as a configuration root) is asked the
 * same question as the live policy on live traffic, after the live decision was taken. It decides nothing —
 * the call goes on under the live decision whatever the shadow says — but every disagreement is counted in
 * `portcullis_shadow_decisions_total{agreement="disagree"}` and kept as a decision record of kind `shadow`
 * (`shadow_of` names the live record), so an author sees on real traffic what the candidate would change.
 *
 * The candidate is loaded once per live runtime, on first use (a reload that changes `policy.shadow` or the
 * folder's content takes effect with the next runtime). One that cannot be loaded is logged once and skipped.
 */
import { isDeepStrictEqual } from 'node:util';
import { resolve } from 'node:path';
import { Counter } from 'prom-client';
import { registry } from '../observe/metrics.js';
import type { Runtime } from '../config/compile.js';
import type { Logger } from '../log.js';
import type { Decision, PolicyInput } from '../policy/engine.js';
import { loadCandidate, type Candidate } from './candidate.js';
import { availability, runtimeFacts } from './versions.js';

export const shadowMetrics = {
  decisions: new Counter({
    name: 'portcullis_shadow_decisions_total',
    help: 'Admission decisions the shadow policy was asked, by whether it agreed with the live policy.',
    labelNames: ['agreement'] as const,
    registers: [registry],
  }),
  disagreements: new Counter({
    name: 'portcullis_shadow_disagreements_total',
    help: 'Shadow disagreements, by the live and the shadow answer (admitted, or the first denial code).',
    labelNames: ['live', 'shadow'] as const,
    registers: [registry],
  }),
};

/** What changed between two decisions, as a list of the fields that differ (empty when they agree). */
export function decisionChanges(a: Decision, b: Decision): string[] {
  const fields: Array<keyof Decision> = ['allow', 'denials', 'team', 'band', 'scope', 'guardrails'];
  return fields.filter((f) => !isDeepStrictEqual(a[f] ?? null, b[f] ?? null));
}

/** A decision's answer in one word: `admitted`, or its first denial code. */
export const answerOf = (d: Decision): string => d.denials[0]?.code ?? 'admitted';

interface ShadowAnswer {
  decision: Decision;
  policy: { version: string; sha256: string };
  dataSha256: string;
  documents: Record<string, string>;
  /** The candidate's versions, by the names a receipt's `decision.versions` uses. */
  versions: Record<string, string>;
}

export class Shadow {
  readonly #log: Logger;
  readonly #candidates = new WeakMap<Runtime, Promise<Candidate | null>>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** The shadow's answer to `input` under `runtime`, or null when no shadow is configured (or it failed to load). */
  async decide(runtime: Runtime, input: PolicyInput): Promise<ShadowAnswer | null> {
    const folder = runtime.gateway.policy?.shadow;
    if (!folder) return null;
    let loading = this.#candidates.get(runtime);
    if (!loading) {
      loading = loadCandidate(resolve(runtime.bundle.root, folder), runtime.bundle.root).catch((err: unknown) => {
        this.#log.warn('decisions.shadow.unloadable', { folder, problem: (err as Error).message.split('\n')[0] });
        return null;
      });
      this.#candidates.set(runtime, loading);
    }
    const candidate = await loading;
    if (!candidate) return null;
    const { evaluator, dataSha256 } = await candidate.evaluatorFor(availability(runtimeFacts(runtime).data));
    const documents = Object.fromEntries(Object.entries(candidate.documents).map(([k, d]) => [k, d.sha256]));
    const d = candidate.documents;
    return {
      decision: evaluator.decide(input),
      policy: candidate.policy,
      dataSha256,
      documents: { policy: candidate.policy.sha256, 'policy-sources': candidate.sourceHash, 'policy-data': dataSha256, ...documents },
      versions: { policy: candidate.policy.version, rules: d.rungs.version, guardrails: d.guardrails.version, catalog: d.catalog.version },
    };
  }
}
