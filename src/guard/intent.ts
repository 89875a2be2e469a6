/**
 * The intent scorer: reads a request as a whole and says whether it ASKS for a capability (making or
 * deploying a weapon, obtaining or producing child sexual abuse material, buying, selling or running fraud
 * tools) or talks ABOUT the topic (analysing, detecting, reporting, defending, history, policy). Word lists
 * cannot tell the two apart - "phishing kits for sale" is a detection rule's subject and a seller's ad - so
 * the lexical layer only decides whether the scorer needs to run (intent detectors' `topics`), and the
 * scorer decides.
 *
 * The model is a multinomial logistic regression over binary word features of the folded text (words.ts:
 * lowercase, leetspeak undone, spelled-out letters joined): unigrams, bigrams and skip-pairs (two words
 * with up to three others between them, so filler words do not break "make ... sarin"), computed over the
 * words and again over the words read as concepts (rules/guardrails-intent-concepts.yaml: "brew", "cook",
 * "synthesise" are all `ask-make`, so a synonym the corpus never used still reads as an ask), the feature vector
 * scaled to unit length so a long text weighs no more than a short one. It is trained by
 * `scripts/train-guard-intent.ts` on the labelled corpus in `test/fixtures/guard/intent/` and committed as
 * data (`rules/guardrails-intent.json`, with the corpus hash it was trained on); nothing is learned at run
 * time. Scoring is linear in the number of words.
 *
 * With the compiled scanner (compiled.ts `intentScore`, scanner/src/scorer.rs) the module cuts the words,
 * hashes the features and sums the rows from this scorer's own tables (`tables`, `ConceptMap.lists`); the
 * softmax (`probabilities`) is this one's. `score` stays the reference the module is tested against.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { foldWords } from './words.js';

export interface IntentModelDoc {
  /** Bumped when the feature definition changes: a model trained on other features is refused. */
  features: 'words-bigrams-skip3-l2/1';
  /** sha256 of the corpus the weights were learned from (files in sorted order, each as `label\ttext` lines). */
  corpusSha256: string;
  /** Word -> concept and prefix -> concept (rules/guardrails-intent-concepts.yaml, copied at training). */
  concepts: { words: Record<string, string>; prefixes: Record<string, string> };
  classes: string[];
  bias: number[];
  /** Feature -> one weight per class. */
  weights: Record<string, number[]>;
  /** Held-out evaluation written by the training script (documentation; not used for scoring). */
  evaluation?: unknown;
}

export const FEATURE_SET = 'words-bigrams-skip3-l2/1';
const MIN_CONCEPT_PREFIX = 3;
const MAX_CONCEPT_PREFIX = 14;
const SKIP = 3;
/** Longest text the scorer reads, in words: the last ones, where a request's ask usually is. */
export const MAX_SCORED_WORDS = 20_000;

/** The distinct features of a list of folded words. */
export function intentFeatures(words: readonly string[]): Set<string> {
  const out = new Set<string>();
  const n = words.length;
  for (let i = 0; i < n; i++) {
    const w = words[i]!;
    out.add(w);
    if (i + 1 < n) out.add(`${w} ${words[i + 1]!}`);
    for (let k = 2; k <= SKIP + 1 && i + k < n; k++) out.add(`${w} ~ ${words[i + k]!}`);
  }
  return out;
}

/** Folded words of a text, as the scorer reads them. */
export function intentWords(text: string): string[] {
  const words = foldWords(text);
  return words.length > MAX_SCORED_WORDS ? words.slice(words.length - MAX_SCORED_WORDS) : words;
}

/** Word -> concept lookups of a model: whole words first, then the longest listed prefix. */
export class ConceptMap {
  private readonly words: Map<string, string>;
  private readonly prefixes: Map<string, string>;
  constructor(doc: IntentModelDoc['concepts']) {
    this.words = new Map(Object.entries(doc.words));
    this.prefixes = new Map(Object.entries(doc.prefixes));
  }
  /** The whole words and the prefixes with their concepts (the compiled scorer's copy of this map). */
  lists(): { words: ReadonlyMap<string, string>; prefixes: ReadonlyMap<string, string> } {
    return { words: this.words, prefixes: this.prefixes };
  }
  /** The concept of each word, or the word itself. */
  read(words: readonly string[]): string[] {
    return words.map((w) => {
      const c = this.words.get(w);
      if (c !== undefined) return c;
      for (let n = Math.min(w.length, MAX_CONCEPT_PREFIX); n >= MIN_CONCEPT_PREFIX; n--) {
        const p = this.prefixes.get(w.slice(0, n));
        if (p !== undefined) return p;
      }
      return w;
    });
  }
}

/** Features of the words and of the same words read as concepts. */
export function requestFeatures(words: readonly string[], concepts: ConceptMap): Set<string> {
  const out = intentFeatures(words);
  for (const f of intentFeatures(concepts.read(words))) out.add(f);
  return out;
}

// Scoring hashes features instead of building their strings (a request's windows hold thousands of words):
// a feature's hash is made from its words' hashes the same way whether it comes from the model file (a
// string such as `make ~ sarin`) or from a request. The hash has 53 bits (two independent 32-bit hashes of
// each word, a JavaScript number holds the pair exactly): with 32 bits, the corpus's ~225,000 distinct
// request features against the model's ~16,000 gave one collision, as the birthday bound predicts (a
// request's `exactly ~ precursors` read the model's weights of `can ~ of`); with 53 the expected count is
// under one in a million.
const hashString = (s: string): number => {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
};
/** A second word hash, of another construction than hashString, for the feature hash's high bits. */
const hashString2 = (s: string): number => {
  let h = 0x9747b28c ^ s.length;
  for (let i = 0; i < s.length; i++) {
    h = Math.imul(h ^ s.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  return h >>> 0;
};
const mix = (kind: number, a: number, b = 0): number => {
  let h = Math.imul(kind ^ a, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15) ^ b, 0x85ebca6b);
  return (h ^ (h >>> 13)) >>> 0;
};
const mix2 = (kind: number, a: number, b = 0): number => {
  let h = Math.imul(kind ^ a, 0xcc9e2d51);
  h = Math.imul(h ^ (h >>> 16) ^ b, 0x1b873593);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
};
const HIGH = 2 ** 21;
/** The feature's 53-bit hash: 21 bits of mix2 over the second word hashes above 32 of mix over the first. */
const key = (kind: number, a1: number, a2: number, b1 = 0, b2 = 0): number => (mix2(kind, a2, b2) % HIGH) * 2 ** 32 + mix(kind, a1, b1);
const UNI = 1;
const BI = 2;
const SKIP_PAIR = 3;

/** The hash of a feature string of intentFeatures (`w`, `a b`, `a ~ b`). */
export function featureHash(f: string): number {
  const skip = f.indexOf(' ~ ');
  if (skip >= 0) return pairKey(SKIP_PAIR, f.slice(0, skip), f.slice(skip + 3));
  const space = f.indexOf(' ');
  if (space >= 0) return pairKey(BI, f.slice(0, space), f.slice(space + 1));
  return key(UNI, hashString(f), hashString2(f));
}
const pairKey = (kind: number, a: string, b: string) => key(kind, hashString(a), hashString2(a), hashString(b), hashString2(b));

/**
 * A set of feature hashes that keeps them in the order first added, in flat typed arrays: a `Set` of 53-bit
 * numbers (not small integers, so each a heap number) cost an allocation and a hash of a boxed double per
 * feature, most of the scorer's time on a long request. Open addressing on the hash's low 32 bits (already
 * mixed), linear probing, at most half full.
 */
class FeatureSet {
  private slots: Float64Array;
  private used: Uint8Array;
  /** The distinct hashes, in the order first added (the order a `Set` iterates in). */
  order: Float64Array;
  size = 0;

  /** Room for about `expected` hashes before it grows (growing is a tenth of a long text's scoring). */
  constructor(expected: number) {
    let size = 1024;
    while (size < expected * 2) size *= 2;
    this.slots = new Float64Array(size);
    this.used = new Uint8Array(size);
    this.order = new Float64Array(size / 2);
  }

  add(h: number): void {
    const mask = this.slots.length - 1;
    for (let i = (h % 2 ** 32) & mask; ; i = (i + 1) & mask) {
      if (this.used[i] === 0) {
        this.used[i] = 1;
        this.slots[i] = h;
        if (this.size === this.order.length) {
          const more = new Float64Array(this.order.length * 2);
          more.set(this.order);
          this.order = more;
        }
        this.order[this.size++] = h;
        if (this.size * 2 > this.slots.length) this.grow();
        return;
      }
      if (this.slots[i] === h) return;
    }
  }

  private grow(): void {
    const size = this.slots.length * 2;
    const mask = size - 1;
    this.slots = new Float64Array(size);
    this.used = new Uint8Array(size);
    for (let k = 0; k < this.size; k++) {
      const h = this.order[k]!;
      let i = (h % 2 ** 32) & mask;
      while (this.used[i] !== 0) i = (i + 1) & mask;
      this.used[i] = 1;
      this.slots[i] = h;
    }
  }
}

/** The hashes of intentFeatures(tokens), given as each token's two word hashes, added to `out`. */
function addFeatureHashes(h1: readonly number[], h2: readonly number[], out: FeatureSet): void {
  const n = h1.length;
  for (let i = 0; i < n; i++) {
    const a1 = h1[i]!;
    const a2 = h2[i]!;
    out.add(key(UNI, a1, a2));
    if (i + 1 < n) out.add(key(BI, a1, a2, h1[i + 1], h2[i + 1]));
    for (let k = 2; k <= SKIP + 1 && i + k < n; k++) out.add(key(SKIP_PAIR, a1, a2, h1[i + k], h2[i + k]));
  }
}

export class IntentScorer {
  readonly concepts: ConceptMap;
  readonly classes: readonly string[];
  private readonly bias: Float64Array;
  // Feature hash -> its row of weights, as one open-addressing table (linear probing, power-of-two size,
  // at most half full) over flat typed arrays rather than a Map of ~16,000 four-number Float64Arrays:
  // the same lookups in about a quarter of the heap, and three objects for the collector to trace instead
  // of ~50,000 (each typed array is an object, a buffer and a backing store).
  /** The 53-bit feature hash of each slot (exact in a double). */
  private readonly keys: Float64Array;
  /** Row number + 1 of each slot (0: empty). */
  private readonly rowOf: Int32Array;
  private readonly mask: number;
  /** The rows, `classes.length` weights each. */
  private readonly table: Float64Array;

  constructor(doc: IntentModelDoc) {
    if (doc.features !== FEATURE_SET) throw new Error(`intent model: features "${String(doc.features)}" are not "${String(FEATURE_SET)}"`);
    if (!Array.isArray(doc.classes) || doc.classes.length < 2 || doc.bias.length !== doc.classes.length) {
      throw new Error('intent model: classes and bias do not agree');
    }
    this.classes = doc.classes;
    this.concepts = new ConceptMap(doc.concepts ?? { words: {}, prefixes: {} });
    this.bias = Float64Array.from(doc.bias);
    const k = doc.classes.length;
    const features = Object.entries(doc.weights);
    let size = 16;
    while (size < features.length * 2) size *= 2;
    this.keys = new Float64Array(size);
    this.rowOf = new Int32Array(size);
    this.mask = size - 1;
    const table = new Float64Array(features.length * k);
    let rows = 0;
    for (const [f, w] of features) {
      if (w.length !== k) throw new Error(`intent model: feature "${f}" has ${w.length} weights`);
      const h = featureHash(f);
      let i = (h % 2 ** 32) & this.mask;
      while (this.rowOf[i] !== 0 && this.keys[i] !== h) i = (i + 1) & this.mask;
      if (this.rowOf[i] === 0) {
        this.keys[i] = h;
        this.rowOf[i] = ++rows;
      }
      // Two features sharing a hash share one row: their weights add up.
      const at = (this.rowOf[i]! - 1) * k;
      for (let c = 0; c < k; c++) table[at + c] = table[at + c]! + w[c]!;
    }
    this.table = rows * k === table.length ? table : table.slice(0, rows * k);
  }

  /** Where a feature's weights start in `table`, or -1 when the model has none. */
  private rowStart(h: number): number {
    for (let i = (h % 2 ** 32) & this.mask; ; i = (i + 1) & this.mask) {
      const r = this.rowOf[i]!;
      if (r === 0) return -1;
      if (this.keys[i] === h) return (r - 1) * this.classes.length;
    }
  }

  /** Class probabilities (softmax) for the words, in `classes` order. */
  score(words: readonly string[]): Float64Array {
    return this.probabilities(this.sums(this.features(words)));
  }

  /**
   * The distinct feature hashes of the words (`intentFeatures` of the words and of their concepts), in the
   * order first met. The compiled scanner (scanner/src/scorer.rs) finds the same, in the same order.
   */
  features(words: readonly string[]): Float64Array {
    const memo = new Map<string, [number, number]>();
    const hashesOf = (ts: readonly string[]): [number[], number[]] => {
      const h1: number[] = [];
      const h2: number[] = [];
      for (const t of ts) {
        let h = memo.get(t);
        if (h === undefined) memo.set(t, (h = [hashString(t), hashString2(t)]));
        h1.push(h[0]);
        h2.push(h[1]);
      }
      return [h1, h2];
    };
    // A text's words give about four distinct features each, over the words and their concepts.
    const feats = new FeatureSet(words.length * 4);
    addFeatureHashes(...hashesOf(words), feats);
    addFeatureHashes(...hashesOf(this.concepts.read(words)), feats);
    return feats.order.subarray(0, feats.size);
  }

  /** The class sums of `features` (distinct, in the order first met): the bias, then each row scaled to unit length. */
  sums(features: Float64Array): Float64Array {
    const k = this.classes.length;
    const z = Float64Array.from(this.bias);
    if (features.length > 0) {
      const scale = 1 / Math.sqrt(features.length);
      const table = this.table;
      // In the order first added, as a Set iterates: the same sums, term for term.
      for (let j = 0; j < features.length; j++) {
        const at = this.rowStart(features[j]!);
        if (at >= 0) for (let c = 0; c < k; c++) z[c]! += table[at + c]! * scale;
      }
    }
    return z;
  }

  /** The softmax of class sums `z` (in place): the compiled scorer's sums go through it too. */
  probabilities(z: Float64Array): Float64Array {
    const k = this.classes.length;
    let max = -Infinity;
    for (let c = 0; c < k; c++) max = Math.max(max, z[c]!);
    let sum = 0;
    for (let c = 0; c < k; c++) sum += z[c] = Math.exp(z[c]! - max);
    for (let c = 0; c < k; c++) z[c]! /= sum;
    return z;
  }

  /** The tables the compiled scorer reads (compiled.ts `intentScore`): the same arrays, not copies. */
  tables(): { keys: Float64Array; rowOf: Int32Array; table: Float64Array; bias: Float64Array } {
    return { keys: this.keys, rowOf: this.rowOf, table: this.table, bias: this.bias };
  }

  classIndex(name: string): number {
    return this.classes.indexOf(name);
  }
}

const MODEL_DIR = fileURLToPath(new URL('../../rules/', import.meta.url));
const loaded = new Map<string, IntentScorer>();

/** The scorer of a model file in the rules directory (`guardrails-intent.json`), read once per process. */
export function loadIntentScorer(file: string): IntentScorer {
  if (!/^[a-z0-9][a-z0-9.-]*\.json$/.test(file)) throw new Error(`intent model "${file}" must be a .json file name in rules/`);
  let s = loaded.get(file);
  if (!s) {
    let doc: IntentModelDoc;
    try {
      doc = JSON.parse(readFileSync(MODEL_DIR + file, 'utf8')) as IntentModelDoc;
    } catch (err) {
      throw new Error(`intent model "${file}" cannot be read: ${(err as Error).message}`, { cause: err });
    }
    loaded.set(file, (s = new IntentScorer(doc)));
  }
  return s;
}

/**
 * Another engine that scores as `IntentScorer.score(intentWords(text))` does, the same to the bit (the compiled
 * scanner, compiled.ts); declared here, beside the reference, so the detectors need not import the engine.
 */
export interface IntentScoring {
  intentScore(scorer: IntentScorer, text: string): Float64Array;
}
