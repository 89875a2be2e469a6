/**
 * The intent model in the loop: which calls it reads, and its verdict. The block rules' intent detectors
 * (intent-detectors.ts: topic terms, then the word-feature scorer) stay the cheap first pass; when
 * `intentModel:` is configured in rules/guardrails.yaml, the multilingual model decides instead of them:
 *
 *  - every call on a red-team route is read by the model;
 *  - a blue-team call is read when the first pass marks it (a topic term occurs and the word scorer's
 *    probability of a harm class reaches `blueEscalation`, well below its own block threshold) or when the
 *    language check (language.ts) says it is not English; any other blue-team call (an English code review
 *    that names no harm topic, or one the word scorer finds plainly benign) never pays for the model.
 *
 * The verdict: for each reading (readings.ts: the whole of a short request; sentence windows over every
 * message of a long one; the last user turn on its own and in context), the head's harm (head.ts: the
 * probability that the reading is not benign, mixed with its nearest training readings' share of asks when the
 * head holds neighbours, and 0 when the head holds a topic gate and the gate finds the reading off every
 * blocked topic; a reading the gate passes whose probability of a class reaches that class's own threshold,
 * when the head holds class thresholds, counts as reaching `threshold` and is refused as that class too); when
 * the highest reaches `threshold`, the call is refused under the rule of the most probable harm class (the
 * intent detector that names that class). A reading the encoder could not embed in time (the pool's bound
 * on queue and time, pool.ts) is a classifier failure with the route's fail mode: closed on red-team routes
 * by default (the call is refused, 503 guardrail-classifier-unavailable), open on blue-team routes, where
 * the first pass's own verdict stands.
 *
 * A reading embedded lately (the earlier turns of a conversation, sent again with each call) is taken from
 * the model's cache (embedding-cache.ts, `cacheEntries`) instead of the encoder; only the others go to the pool.
 */
import type { Finding } from '../types.js';
import { ClassifierError } from '../types.js';
import type { FirstPass } from '../intent-detectors.js';
import { intentWords } from '../intent.js';
import { normalise } from '../normalise.js';
import { encoderFiles } from './encoder.js';
import { CSAM_SECOND, loadIntentHead, type IntentHead } from './head.js';
import { looksNonEnglish } from './language.js';
import { EmbeddingCache, embeddingTotals } from './embedding-cache.js';
import { EncoderPool } from './pool.js';
import { modelText, readingsOf } from './readings.js';

/** Fewer letters than this across a request's texts and the model does not read it. */
export const MIN_LETTERS = 12;

/** A letter (a code point, with the u flag); global, so that `test` walks a text without a match array per letter. */
const LETTER = /\p{L}/gu;

function hasLetters(texts: readonly string[], min: number): boolean {
  let n = 0;
  for (const t of texts) {
    LETTER.lastIndex = 0;
    while (LETTER.test(t)) if (++n >= min) return true;
  }
  return false;
}

export interface IntentModelDoc {
  /** Head file in rules/ (trained by scripts/train-guard-intent.ts). */
  head: string;
  /** Encoder manifest in rules/ (pins the package, version and hashes). */
  encoder: string;
  threshold: number;
  blueEscalation: number;
  readingChars: number;
  maxReadings: number;
  workers: number;
  queue: number;
  timeoutMs: number;
  failClosed: { red: boolean; blue: boolean };
  /** Embeddings kept for readings seen again (embedding-cache.ts); 0 keeps none. DEFAULT_CACHE_ENTRIES when absent. */
  cacheEntries?: number;
}

/** About 7 MiB of embeddings (4,096 of about 1.75 KiB): the readings of 512 calls of `maxReadings` 8. */
export const DEFAULT_CACHE_ENTRIES = 4096;

export type Team = 'red' | 'blue';

export interface ModelVerdict {
  /** Whether the model read the call at all. */
  read: boolean;
  findings: Finding[];
  failure?: { classifier: string; failClosed: boolean; reason: string };
}

/**
 * The keywords a tool definition is built of (OpenAI's function envelope and JSON Schema's), which the guard
 * reads as texts like any other key or value. They are structure, not what the caller wrote: read by the
 * model, ten of them around a one-line description ("type function function description ... parameters type
 * object") outweigh the description itself, and an ask put there read as benign. So the model reads a tool
 * definition's other keys and values (names, descriptions, property names, enum values) without them; the
 * word and secret detectors still read every text.
 */
const SCHEMA_WORDS = new Set([
  'type',
  'function',
  'description',
  'parameters',
  'properties',
  'required',
  'items',
  'enum',
  'object',
  'string',
  'number',
  'integer',
  'boolean',
  'array',
  'null',
  'strict',
  'additionalProperties',
  'name',
  'default',
  'format',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  '$defs',
  'title',
]);
const isSchemaWord = (t: { where: string; text: string }): boolean => t.where.startsWith('tools[') && SCHEMA_WORDS.has(t.text);

export const MODEL_CLASSIFIER_ID = 'intent-model';
/** A harm class holding this much of the probability of a refused reading is refused too. */
const SECOND = CSAM_SECOND;

export class IntentModel {
  readonly head: IntentHead;
  /**
   * For tests and metrics: calls the model read, their readings, and of those the ones whose embedding came
   * from the cache (`hits`) and the ones sent to the encoder (`misses`, every reading when the cache is off).
   */
  readonly stats = { calls: 0, readings: 0, hits: 0, misses: 0 };
  private readonly pool: EncoderPool;
  private readonly cache: EmbeddingCache;

  /**
   * `options.cache` shares one embedding cache between models of the same encoder (the evaluations read the
   * same sets with several heads); without it the model keeps its own of `doc.cacheEntries`.
   */
  constructor(
    readonly doc: IntentModelDoc,
    options: { cache?: EmbeddingCache } = {},
  ) {
    const files = encoderFiles(doc.encoder);
    this.head = loadIntentHead(doc.head);
    if (this.head.doc.encoderSha256 !== files.sha256) {
      throw new Error(`intent model: ${doc.head} was trained on encoder weights ${this.head.doc.encoderSha256}, the installed weights are ${files.sha256}`);
    }
    if (this.head.classes[0] !== 'benign') throw new Error(`intent model: ${doc.head}'s first class must be benign`);
    if (!(doc.threshold > 0 && doc.threshold <= 1)) throw new Error('intentModel.threshold must be in (0, 1]');
    this.cache = options.cache ?? new EmbeddingCache(doc.cacheEntries ?? DEFAULT_CACHE_ENTRIES);
    this.cache.bind(files.sha256);
    this.pool = new EncoderPool(files, { workers: doc.workers, queue: doc.queue, timeoutMs: doc.timeoutMs });
  }

  /** Whether a call of this team, with this first pass over these texts, goes to the model. */
  reads(team: Team, first: FirstPass, texts: readonly string[]): boolean {
    // An embedding of a few letters is noise ("0y" read as harmful): below MIN_LETTERS the first pass (the
    // lexical terms and the word scorer) decides alone, on either team.
    if (!hasLetters(texts, MIN_LETTERS)) return false;
    if (team === 'red') return true;
    if (first.spots.length > 0 && first.top >= this.doc.blueEscalation) return true;
    return texts.some((t) => looksNonEnglish(t));
  }

  /**
   * The model's verdict on a call. `original` are the request's texts as written (slot order), `first` the
   * first pass over their normal form, `offsetOf` maps a normal-form offset of text i to the original.
   * `classes` maps each harm class to the rule and detector that refuse it; `lastUser` is the index in
   * `original` of the last user turn's content, when the request has one.
   */
  async decide(
    team: Team,
    original: ReadonlyArray<{ where: string; text: string }>,
    first: FirstPass,
    offsetOf: (text: number, offset: number) => number,
    classes: ReadonlyMap<string, { rule: string; action: Finding['action']; detector: string }>,
    lastUser?: number,
    cacheScope = '',
  ): Promise<ModelVerdict> {
    const texts = original.map((t) => (isSchemaWord(t) ? '' : modelText(t.text)));
    if (!this.reads(team, first, texts)) return { read: false, findings: [] };
    const spots = first.spots.map((s) => [s.text, offsetOf(s.text, s.offset)] as const);
    const readings = readingsOf(
      texts,
      spots,
      { chars: this.doc.readingChars, max: this.doc.maxReadings, askSentencesFrom: this.head.doc.readings?.askSentencesFrom },
      lastUser,
    );
    if (readings.length === 0) return { read: true, findings: [] };
    this.stats.calls++;
    this.stats.readings += readings.length;
    let vectors: Float32Array[];
    try {
      vectors = await this.embeddings(readings, cacheScope);
    } catch (err) {
      const reason = err instanceof ClassifierError ? err.reason : 'error';
      return { read: true, findings: [], failure: { classifier: MODEL_CLASSIFIER_ID, failClosed: this.doc.failClosed[team], reason } };
    }
    // The most harmful reading decides; it is refused under its most probable harm class, and also as CSAM
    // when CSAM holds at least SECOND of the probability (a CSAM ask the head reads as partly fraud is still
    // refused as CSAM). Other second classes are not named: the receipt says what the ask most likely was.
    // A reading the gate passes whose probability of a class reaches that class's own threshold (head.ts
    // classThresholds) is refused as that class whatever its harm: it counts as reaching the threshold.
    let worst: Float64Array | null = null;
    let worstHarm = -1;
    const floored = new Set<number>();
    readings.forEach((r, i) => {
      const words = intentWords(normalise(r).text);
      const x = this.head.input(vectors[i]!, words);
      const p = this.head.probabilities(x);
      // A reading the backstop head (head.ts) refuses as CSAM is refused as CSAM whatever this head reads.
      const back = this.head.backstopCsam(x, words);
      // A reading the topic gate finds off every blocked topic is not refused, however its harm reads.
      const passes = this.head.gatePasses(p, x, words);
      if (!passes && !back) {
        if (0 > worstHarm) [worst, worstHarm] = [p, 0];
        return;
      }
      let harm = passes ? this.head.harm(p, vectors[i]!, this.doc.threshold) : 0;
      const at = passes ? this.head.classesAtFloor(p) : [];
      if (back) at.push(this.head.classes.indexOf('csam'));
      if (at.length > 0) {
        for (const c of at) floored.add(c);
        harm = Math.max(harm, this.doc.threshold);
      }
      if (harm > worstHarm) [worst, worstHarm] = [p, harm];
    });
    const p = worst as Float64Array | null;
    if (!p || worstHarm < this.doc.threshold) return { read: true, findings: [] };
    let best = 1;
    for (let c = 2; c < p.length; c++) if (p[c]! > p[best]!) best = c;
    const where = first.spots.length > 0 ? first.spots[first.spots.length - 1]!.where : lastNonEmpty(original);
    const findings: Finding[] = [];
    for (let c = 1; c < p.length; c++) {
      if (c !== best && !floored.has(c) && !(this.head.classes[c] === 'csam' && p[c]! >= SECOND)) continue;
      const target = classes.get(this.head.classes[c]!);
      if (target) findings.push({ rule: target.rule, action: target.action, detector: `${target.detector}:model`, where });
    }
    return { read: true, findings };
  }

  /**
   * The embeddings of `readings`, in order: the cache's, and the encoder's for the rest, stored as they come.
   * Two calls that want the same reading at once may both embed it: sharing the first one's job would tie
   * the second call's fate to a job it did not submit (its queue slot, its timeout, its worker's death),
   * where each call's bounds are its own (pool.ts); and a conversation's calls come one after another.
   */
  private async embeddings(readings: readonly string[], scope: string): Promise<Float32Array[]> {
    const keys = readings.map((r) => this.cache.key(scope, r));
    const out: Array<Float32Array | undefined> = keys.map((k) => this.cache.get(k));
    const missing: number[] = [];
    out.forEach((v, i) => v === undefined && missing.push(i));
    const hits = readings.length - missing.length;
    this.stats.hits += hits;
    this.stats.misses += missing.length;
    embeddingTotals.cached += hits;
    embeddingTotals.encoded += missing.length;
    if (missing.length === 0) return out as Float32Array[];
    // Several readings are shared among the workers, so a long call waits for half of them, not all.
    const parts = Math.min(this.doc.workers, missing.length);
    const size = Math.ceil(missing.length / parts);
    const jobs: number[][] = [];
    for (let i = 0; i < missing.length; i += size) jobs.push(missing.slice(i, i + size));
    await Promise.all(
      jobs.map(async (job) => {
        const vectors = await this.pool.embed(job.map((i) => readings[i]!));
        job.forEach((i, j) => {
          out[i] = vectors[j]!;
          this.cache.put(keys[i] ?? null, vectors[j]!);
        });
      }),
    );
    return out as Float32Array[];
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function lastNonEmpty(texts: ReadonlyArray<{ where: string; text: string }>): string {
  for (let i = texts.length - 1; i >= 0; i--) if (texts[i]!.text.trim() !== '') return texts[i]!.where;
  return texts[texts.length - 1]?.where ?? 'messages';
}
