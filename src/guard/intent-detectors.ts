/**
 * Intent detectors (`kind: intent` in rules/guardrails.yaml): the block rules' decision. Each names a class
 * of the intent model (cbrn, csam, fraud), a threshold, and its topics - a lexical prefilter: the scorer
 * runs only on a request where some topic term occurs, which is rare, so ordinary requests cost one trie
 * walk. When it runs, the scorer reads the whole request (every text, in reading order, so an ask split
 * across two messages is read as one) and each place that holds a topic term on its own (so a short ask
 * cannot be diluted by a long harmless document beside it); the highest probability of the detector's class
 * decides. The finding names the last place a topic term occurred.
 *
 * A long text is read where its topic terms are: CONTEXT characters on each side of each (merged where
 * they overlap, at most MAX_WINDOWS per text), which keeps the cost of a half-megabyte request that mentions
 * a topic in the low milliseconds. A text up to SHORT characters is read whole.
 */
import { LexicalMatcher } from './lexical.js';
import type { WordStream } from './words.js';
import { intentWords, loadIntentScorer, type IntentScorer, type IntentScoring } from './intent.js';
import type { Action, Finding, IntentDetectorDoc } from './types.js';

export interface IntentDetectorSpec extends IntentDetectorDoc {
  rule: string;
  action: Action;
}

export interface FirstPass {
  findings: Finding[];
  spots: Array<{ text: number; offset: number; where: string }>;
  top: number;
}

interface Compiled {
  spec: IntentDetectorSpec;
  scorer: IntentScorer;
  classIndex: number;
}

const SHORT = 2048;
const CONTEXT = 240;
const MAX_WINDOWS = 6;
const MAX_PLACES = 4;
/** The whole-request reading keeps its last this many characters (where the ask usually is). */
const MAX_WHOLE = 4096;

/** The parts of `text` around `offsets` (ascending), or all of it when it is short. */
function around(text: string, offsets: readonly number[]): string {
  if (text.length <= SHORT) return text;
  const parts: string[] = [];
  let from = -1;
  let to = -1;
  for (const o of offsets) {
    if (o - CONTEXT <= to) to = Math.min(text.length, o + CONTEXT);
    else {
      if (to > from) parts.push(text.slice(from, to));
      if (parts.length >= MAX_WINDOWS) break;
      from = Math.max(0, o - CONTEXT);
      to = Math.min(text.length, o + CONTEXT);
    }
  }
  if (to > from && parts.length < MAX_WINDOWS) parts.push(text.slice(from, to));
  return parts.join('\n');
}

export class IntentDetectors {
  private readonly compiled: Compiled[];
  /** The topic terms of every detector, one lexical matcher (its hits may come from the compiled scanner). */
  readonly topics: LexicalMatcher;

  /**
   * `scoring`: the engine that scores a text instead of intent.ts (the compiled scanner, compiled.ts
   * `intentScore`: the same probabilities to the bit).
   */
  constructor(
    specs: readonly IntentDetectorSpec[],
    private readonly scoring?: IntentScoring,
  ) {
    this.compiled = specs.map((spec) => {
      const scorer = loadIntentScorer(spec.model);
      const classIndex = scorer.classIndex(spec.class);
      if (classIndex < 0)
        throw new Error(`rule ${spec.rule}: detector ${spec.id}: the intent model has no class "${spec.class}" (it has ${scorer.classes.join(', ')})`);
      if (!(spec.threshold > 0 && spec.threshold <= 1)) throw new Error(`rule ${spec.rule}: detector ${spec.id}: threshold must be in (0, 1]`);
      return { spec, scorer, classIndex };
    });
    this.topics = new LexicalMatcher(
      specs.map((s) => ({ rule: s.rule, action: s.action, id: s.id, any: s.topics, near: [] })),
      { squeeze: false },
    );
  }

  get size(): number {
    return this.compiled.length;
  }

  /**
   * Findings for texts already normalised, in reading order. `ws`, when given, already holds the words of
   * `texts` (lexical.ts fillStream) - the scan tokenises a request once for every lexical reader.
   */
  match(texts: ReadonlyArray<{ where: string; text: string }>, ws?: WordStream): Finding[] {
    return this.firstPass(texts, ws).findings;
  }

  /**
   * `match` with what the intent model needs to know of the first pass: where the topic terms are (text
   * index and offset in the normalised text) and the highest probability any detector's class reached
   * (0 when no topic term occurs), whether or not it crossed the detector's threshold. `topicHits`, with `ws`:
   * the topic matcher's hits on it, found by the compiled scanner (lexical.ts `matchStream`).
   */
  firstPass(texts: ReadonlyArray<{ where: string; text: string }>, ws?: WordStream, topicHits?: ArrayLike<number>): FirstPass {
    const none: FirstPass = { findings: [], spots: [], top: 0 };
    if (this.compiled.length === 0) return none;
    const spots = ws ? this.topics.spotsStream(texts, ws, topicHits ? { words: topicHits } : undefined) : this.topics.spots(texts);
    if (spots.length === 0) return none;
    // What each text contributes: the whole of a short text, the windows around topic terms of a long one.
    const offsets = new Map<number, number[]>();
    for (const s of spots) {
      const list = offsets.get(s.text) ?? [];
      list.push(s.offset);
      offsets.set(s.text, list);
    }
    // A text without a topic term is read only when it is short and next to one that has (the first half of
    // an ask split across two messages).
    const read = texts.map((t, i) => {
      const o = offsets.get(i);
      if (o)
        return around(
          t.text,
          [...new Set(o)].sort((a, b) => a - b),
        );
      return t.text.length <= SHORT && (offsets.has(i - 1) || offsets.has(i + 1)) ? t.text : '';
    });
    const hits = spots.map((s) => ({ detector: s.detector, where: texts[s.text]!.where }));
    // Scores are memoised per (model, text): detectors usually share one model.
    const memo = new Map<string, Float64Array>();
    const scoreOf = (c: Compiled, key: string, text: () => string) => {
      const k = `${c.spec.model}\u0000${key}`;
      const scorer = c.scorer;
      let p = memo.get(k);
      if (!p) memo.set(k, (p = this.scoring ? this.scoring.intentScore(scorer, text()) : scorer.score(intentWords(text()))));
      return p;
    };
    const textOf = (where: string) =>
      texts
        .map((t, i) => (t.where === where ? read[i]! : ''))
        .filter((t) => t !== '')
        .join('\n');
    const whole = () =>
      read
        .filter((t) => t !== '')
        .join('\n')
        .slice(-MAX_WHOLE);
    const findings: Finding[] = [];
    let top = 0;
    this.compiled.forEach((c) => {
      const { spec, classIndex } = c;
      const places = hits.filter((h) => h.detector === spec.id).map((h) => h.where);
      if (places.length === 0) return;
      let p = scoreOf(c, '', whole)[classIndex]!;
      // Each place on its own too - the last MAX_PLACES of them, where an ask usually is.
      const distinct = [...new Set(places)];
      if (distinct.length > 1 || read.some((t, i) => t !== '' && texts[i]!.where !== distinct[0])) {
        for (const where of distinct.slice(-MAX_PLACES)) p = Math.max(p, scoreOf(c, `@${where}`, () => textOf(where))[classIndex]!);
      }
      top = Math.max(top, p);
      if (p >= spec.threshold) findings.push({ rule: spec.rule, action: spec.action, detector: spec.id, where: lastPlace(texts, places) });
    });
    return { findings, spots: spots.map((s) => ({ text: s.text, offset: s.offset, where: texts[s.text]!.where })), top };
  }

  /** The rule, action and detector id of each class the detectors decide (for the intent model's findings). */
  get classes(): ReadonlyMap<string, { rule: string; action: Action; detector: string }> {
    return new Map(this.compiled.map((c) => [c.spec.class, { rule: c.spec.rule, action: c.spec.action, detector: c.spec.id }]));
  }
}

function lastPlace(texts: ReadonlyArray<{ where: string }>, places: readonly string[]): string {
  const set = new Set(places);
  for (let i = texts.length - 1; i >= 0; i--) if (set.has(texts[i]!.where)) return texts[i]!.where;
  return places[places.length - 1]!;
}
