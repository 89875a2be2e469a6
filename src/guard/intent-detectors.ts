/**
 * Intent detectors (`kind: intent` in rules/guardrails.yaml): the block rules' decision. Each names a class
 * of the intent model (cbrn, csam, fraud), a threshold, and its topics - a lexical prefilter: the scorer
 * runs only on a request where some topic term occurs, which is rare, so ordinary requests cost one trie
 * walk. When it runs, the scorer reads the whole request (every text, in reading order, so an ask split
 * across two messages is read as one) and each place that holds a topic term on its own (so a short ask
 * cannot be diluted by a long harmless document beside it); the highest probability of the detector's class
 * decides. The finding names the last place a topic term occurred.
 */
import { LexicalMatcher } from './lexical.js';
import { intentWords, loadIntentScorer, type IntentScorer } from './intent.js';
import type { Action, Finding, IntentDetectorDoc } from './types.js';

export interface IntentDetectorSpec extends IntentDetectorDoc {
  rule: string;
  action: Action;
}

interface Compiled {
  spec: IntentDetectorSpec;
  scorer: IntentScorer;
  classIndex: number;
}

export class IntentDetectors {
  private readonly compiled: Compiled[];
  private readonly topics: LexicalMatcher;

  constructor(specs: readonly IntentDetectorSpec[]) {
    this.compiled = specs.map((spec) => {
      const scorer = loadIntentScorer(spec.model);
      const classIndex = scorer.classIndex(spec.class);
      if (classIndex < 0) throw new Error(`rule ${spec.rule}: detector ${spec.id}: the intent model has no class "${spec.class}" (it has ${scorer.classes.join(', ')})`);
      if (!(spec.threshold > 0 && spec.threshold <= 1)) throw new Error(`rule ${spec.rule}: detector ${spec.id}: threshold must be in (0, 1]`);
      return { spec, scorer, classIndex };
    });
    this.topics = new LexicalMatcher(specs.map((s) => ({ rule: s.rule, action: s.action, id: s.id, any: s.topics, near: [] })));
  }

  get size(): number {
    return this.compiled.length;
  }

  /** Findings for texts already normalised, in reading order. */
  match(texts: ReadonlyArray<{ where: string; text: string }>): Finding[] {
    if (this.compiled.length === 0) return [];
    const hits = this.topics.match(texts);
    if (hits.length === 0) return [];
    // Scores are memoised per (model, text): detectors usually share one model.
    const memo = new Map<string, Float64Array>();
    const scoreOf = (c: Compiled, key: string, text: () => string) => {
      const k = `${c.spec.model}\u0000${key}`;
      const scorer = c.scorer;
      let p = memo.get(k);
      if (!p) memo.set(k, (p = scorer.score(intentWords(text()))));
      return p;
    };
    const textOf = (where: string) =>
      texts
        .filter((t) => t.where === where)
        .map((t) => t.text)
        .join('\n');
    const whole = () => texts.map((t) => t.text).join('\n');
    const findings: Finding[] = [];
    this.compiled.forEach((c) => {
      const { spec, classIndex } = c;
      const places = hits.filter((h) => h.detector === spec.id).map((h) => h.where);
      if (places.length === 0) return;
      let p = scoreOf(c, '', whole)[classIndex]!;
      for (const where of new Set(places)) p = Math.max(p, scoreOf(c, `@${where}`, () => textOf(where))[classIndex]!);
      if (p >= spec.threshold) findings.push({ rule: spec.rule, action: spec.action, detector: spec.id, where: lastPlace(texts, places) });
    });
    return findings;
  }
}

function lastPlace(texts: ReadonlyArray<{ where: string }>, places: readonly string[]): string {
  const set = new Set(places);
  for (let i = texts.length - 1; i >= 0; i--) if (set.has(texts[i]!.where)) return texts[i]!.where;
  return places[places.length - 1]!;
}
