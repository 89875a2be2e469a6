/**
 * The classification head of the intent model: a multinomial logistic regression, optionally over one
 * hidden layer of rectified units (a small MLP, `hidden`), over the encoder's sentence embedding (multilingual-e5-small, 384 numbers) and the concept features of the text (does it
 * hold a word the concept list, rules/guardrails-intent-concepts.yaml, files under `ask-make`, `ask-obtain`,
 * `about-defend`, ...: the English word lists that were the whole model before, now a few inputs beside
 * the embedding). Features are standardised with the training set's mean and spread, stored in the head.
 *
 * Beside the regression, the head may hold *neighbours*: the embeddings of the training readings (int8, one
 * scale per vector) with whether each is an ask. A reading's harm is then mixed from the regression's
 * probability of not benign and the weighted share of asks among its `k` most similar training readings
 * (weights exp((similarity - best similarity) / tau)), except that a reading the regression reads as a
 * `keep` class (CSAM) keeps at least the regression's score. A line of text close to a known benign line is
 * pulled down even where the linear boundary leans harmful (a bank's warning that names the code it will
 * never ask for), and an ask close to known asks is pulled up. scripts/intent-cv.ts measures it on the
 * folds and on the development set; the committed head does not hold neighbours (docs/guardrails.md says why).
 *
 * The head may also hold a *topic gate* (`gate`): a second small model over the same input (the head's
 * arithmetic: standardised input, an optional hidden layer, a softmax over off-topic and on-topic) that reads
 * only whether the text concerns a blocked topic at all (CBRN agents or weapons, sexual material or abuse of
 * minors, fraud tools or services), trained on the corpus's asks and topic-laden benign lines against
 * off-topic ones (everyday requests, offensive-security work that names no blocked topic). A reading is then
 * refused only when the gate passes and the harm reaches its threshold: a recipe or a database backup in an
 * unfamiliar language or register is not read as an ask because the ask head leans harmful on what it has
 * not seen. The gate passes a reading whose words hold a term of its topic concepts (`topicConcepts`: text
 * that names a blocked topic is left to the ask head, as without a gate), and otherwise one whose topic
 * probability reaches the threshold of its most probable harm class, or CSAM's (lower: CSAM is refused
 * whatever the framing or language) when CSAM holds at least CSAM_SECOND of the probability. A head without
 * a gate decides as before.
 *
 * The head may also hold *class thresholds* (`classThresholds`): a harm class whose probability alone reaches
 * its own threshold, on a reading the gate passes, has the reading refused as that class even when the harm
 * (the probability of not benign) stays below the configured threshold. It is a floor for a class that must be
 * refused whatever its framing (CSAM: an ask the head reads as 0.4 CSAM and 0.6 benign is still refused). A
 * head without them decides as before.
 *
 * The head may also hold a *CSAM backstop* (`backstop`): the weights of another ask head (the one configured
 * before it) whose CSAM verdicts it keeps. A reading that head would have refused as CSAM (its gate passes on
 * that head's probabilities, and its probability of CSAM reaches its CSAM threshold, or its harm reaches its
 * own threshold with CSAM the most probable harm class or holding at least CSAM_SECOND) is refused as CSAM by
 * this head too, whatever this head reads. A new ask head trained to refuse less benign text can then not
 * lose a CSAM ask the head before it refused, on the same readings; what it costs is that head's CSAM
 * refusals of benign text, which stay. A head without it decides as before. `backstop` may be a list: a head
 * that itself kept a backstop refused as CSAM what its own ask head or its backstop refused, so a head that
 * replaces it keeps both, and refuses as CSAM a reading any of them refuses as CSAM.
 *
 * The head is data: rules/guardrails-intent-head.json, written by scripts/train-guard-intent.ts with the
 * sha256 of the corpus and of the encoder weights it was trained on. A head trained on another encoder is
 * refused when loaded, since its weights would read another embedding space.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConceptMap, type IntentModelDoc } from '../intent.js';

export const HEAD_FEATURES = 'e5-small-q4-query+concepts/1';

export interface IntentHeadDoc {
  features: typeof HEAD_FEATURES;
  /** sha256 of the encoder weights the embeddings came from (rules/guardrails-intent-encoder.json). */
  encoderSha256: string;
  /** sha256 of the training corpus (scripts/train-guard-intent.ts readCorpus). */
  corpusSha256: string;
  classes: string[];
  /** Concept names used as features, in order, and the word tables that define them. */
  conceptNames: string[];
  concepts: IntentModelDoc['concepts'];
  dim: number;
  mean: number[];
  scale: number[];
  /**
   * One hidden layer, when present: one row of weights per unit over the standardised input (length
   * dim + conceptNames.length), its bias, and max(0, .) of the sum; the class weights then read the units.
   */
  hidden?: { weights: number[][]; bias: number[] };
  /** One row of weights per class, each of length dim + conceptNames.length (or the hidden units). */
  weights: number[][];
  bias: number[];
  /** Training readings for the nearest-neighbour score (see above), when the head uses it. */
  neighbours?: NeighboursDoc;
  /** The topic gate (see above), when the head has one. */
  gate?: GateDoc;
  /** Per harm class, the probability of that class alone at which a reading the gate passes is refused (see above). */
  classThresholds?: Record<string, number>;
  /** The CSAM backstop (see above), when the head has one; a list when it keeps more than one head's CSAM verdicts. */
  backstop?: BackstopDoc | BackstopDoc[];
  /**
   * How the runtime reads a request for this head beyond intentModel's settings (readings.ts): `askSentencesFrom`, a
   * request that fits in one reading but holds at least that many characters is also read as its two most ask-like
   * sentences on their own. Absent: as before.
   */
  readings?: { askSentencesFrom?: number };
  /** sha256 of training lines the ask head read beyond the corpus and the gate's lines (scripts/train-guard-intent.ts evasiveLines), when any. */
  extraLinesSha256?: string;
  evaluation?: unknown;
}

export interface GateDoc {
  /** Standardisation of the input (embedding and concepts, as the head's), from the gate's own lines. */
  mean: number[];
  scale: number[];
  /** An optional hidden layer, as the head's. */
  hidden?: { weights: number[][]; bias: number[] };
  /** Two rows of weights and biases (off-topic, on-topic), read as the head's classes: softmax, P(on-topic) second. */
  weights: number[][];
  bias: number[];
  /** The gate passes a reading whose probability of a blocked topic reaches the threshold of its harm class. */
  thresholds: Record<string, number>;
  /**
   * Concepts of the head's concept tables (`concepts`) whose words let a reading through the gate whatever its
   * score: a reading that names a blocked topic's term is left to the ask head, as without a gate.
   */
  topicConcepts?: string[];
  /** sha256 of the lines the gate was trained on beside the corpus (the trainer's gateLines). */
  linesSha256: string;
}

/** Another ask head's arithmetic and thresholds, kept for its CSAM verdicts (see above). */
export interface BackstopDoc {
  /** The head file it was copied from, and that file's sha256, for the record. */
  from: string;
  sha256: string;
  mean: number[];
  scale: number[];
  hidden?: { weights: number[][]; bias: number[] };
  /** One row per class of the head (the same classes, in the same order). */
  weights: number[][];
  bias: number[];
  /** The shared threshold that head was configured with, and its CSAM threshold. */
  threshold: number;
  csamThreshold: number;
}

/** A harm class holding this much of a reading's probability is refused too (intent-model.ts); so CSAM's gate threshold applies from here. */
export const CSAM_SECOND = 0.15;

export interface NeighboursDoc {
  k: number;
  tau: number;
  /** Share of the regression in the mixed harm (the rest is the neighbours' share of asks). */
  mix: number;
  /**
   * Harm classes the neighbours never pull down: a reading whose most probable harm class is one of them
   * keeps at least the regression's probability of not benign (CSAM is refused whatever its framing).
   */
  keep: string[];
  /** 1 per ask, 0 per benign reading, in vector order. */
  labels: number[];
  /** Per vector, the factor that turns its int8 components back into the embedding's. */
  scales: number[];
  /** base64 of labels.length * dim int8 components. */
  vectors: string;
}

/** int8 rows of unit embeddings, for the nearest-neighbour score. */
export class Neighbours {
  private readonly q: Int8Array;
  constructor(
    readonly doc: NeighboursDoc,
    readonly dim: number,
  ) {
    const buf = Buffer.from(doc.vectors, 'base64');
    this.q = new Int8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    if (
      doc.scales.length !== doc.labels.length ||
      this.q.length !== doc.labels.length * dim ||
      !(doc.k >= 1) ||
      !(doc.tau > 0) ||
      !(doc.mix >= 0 && doc.mix <= 1)
    )
      throw new Error('intent head: neighbours do not agree with dim, or k, tau, mix out of range');
  }

  /** Weighted share of asks among the k training readings most similar (cosine) to `e`. */
  askShare(e: ArrayLike<number>): number {
    const { k, tau, labels, scales } = this.doc;
    const d = this.dim;
    const n = labels.length;
    // The k best similarities, kept sorted (k is small).
    const best: Array<{ s: number; y: number }> = [];
    for (let i = 0; i < n; i++) {
      let s = 0;
      const off = i * d;
      for (let j = 0; j < d; j++) s += this.q[off + j]! * e[j]!;
      s *= scales[i]!;
      if (best.length === k && s <= best[k - 1]!.s) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.s < s) at--;
      best.splice(at, 0, { s, y: labels[i]! });
      if (best.length > k) best.pop();
    }
    let num = 0,
      den = 0;
    for (const x of best) {
      const w = Math.exp((x.s - best[0]!.s) / tau);
      num += w * x.y;
      den += w;
    }
    return den === 0 ? 0 : num / den;
  }

  /** Quantises unit embeddings (one per row) and their labels into the head's form. */
  static encode(rows: ReadonlyArray<{ e: ArrayLike<number>; ask: boolean }>, o: { k: number; tau: number; mix: number; keep: string[] }): NeighboursDoc {
    const d = rows[0]?.e.length ?? 0;
    const q = new Int8Array(rows.length * d);
    const scales = rows.map((r, i) => {
      let m = 0;
      for (let j = 0; j < d; j++) m = Math.max(m, Math.abs(r.e[j]!));
      const f = m === 0 ? 1 : 127 / m;
      for (let j = 0; j < d; j++) q[i * d + j] = Math.round(r.e[j]! * f);
      return Math.round((1 / f) * 1e9) / 1e9;
    });
    return { ...o, labels: rows.map((r) => (r.ask ? 1 : 0)), scales, vectors: Buffer.from(q.buffer).toString('base64') };
  }
}

/** The raw feature vector of one reading: its embedding, then 0/1 per concept present in its words. */
export function headInput(embedding: Float32Array, words: readonly string[], concepts: ConceptMap, names: readonly string[]): Float64Array {
  const out = new Float64Array(embedding.length + names.length);
  out.set(embedding);
  const present = new Set(concepts.read(words));
  names.forEach((n, i) => {
    if (present.has(n)) out[embedding.length + i] = 1;
  });
  return out;
}

/**
 * Whether a second model over the same input (the gate, the backstop) has the shapes softmaxScores reads:
 * `width` numbers in, an optional hidden layer over them, `outputs` rows out.
 */
function layersAgree(p: Pick<IntentHeadDoc, 'mean' | 'scale' | 'weights' | 'bias' | 'hidden'>, width: number, outputs: number): boolean {
  const read = p.hidden ? p.hidden.weights.length : width;
  return (
    p.mean.length === width &&
    p.scale.length === width &&
    p.weights.length === outputs &&
    p.bias.length === outputs &&
    p.weights.every((w) => w.length === read) &&
    (!p.hidden || (p.hidden.bias.length === p.hidden.weights.length && p.hidden.weights.every((w) => w.length === width)))
  );
}

export class IntentHead {
  readonly classes: readonly string[];
  readonly concepts: ConceptMap;
  constructor(readonly doc: IntentHeadDoc) {
    if (doc.features !== HEAD_FEATURES) throw new Error(`intent head: features "${String(doc.features)}" are not "${String(HEAD_FEATURES)}"`);
    const width = doc.dim + doc.conceptNames.length;
    const h = doc.hidden;
    const read = h ? h.weights.length : width;
    if (h && (h.bias.length !== h.weights.length || h.weights.some((w) => w.length !== width)))
      throw new Error('intent head: hidden weights do not agree with dim and concepts');
    if (doc.mean.length !== width || doc.scale.length !== width || doc.weights.length !== doc.classes.length || doc.weights.some((w) => w.length !== read)) {
      throw new Error('intent head: weights, mean and scale do not agree with dim and concepts');
    }
    this.classes = doc.classes;
    this.concepts = new ConceptMap(doc.concepts);
    this.neighbours = doc.neighbours ? new Neighbours(doc.neighbours, doc.dim) : undefined;
    const g = doc.gate;
    if (g) {
      if (!layersAgree(g, width, 2)) throw new Error('intent head: gate weights, mean and scale do not agree with dim and concepts');
      for (const c of doc.classes.slice(1))
        if (!(g.thresholds[c]! >= 0 && g.thresholds[c]! <= 1)) throw new Error(`intent head: gate threshold of ${c} missing or out of [0, 1]`);
    }
    const from = doc.readings?.askSentencesFrom;
    if (from !== undefined && !(Number.isInteger(from) && from > 0)) throw new Error('intent head: readings.askSentencesFrom must be a positive whole number');
    this.backstops = backstopsOf(doc);
    for (const b of this.backstops) {
      if (!layersAgree(b, width, doc.classes.length))
        throw new Error('intent head: backstop weights, mean and scale do not agree with dim, concepts and classes');
      if (doc.classes.indexOf('csam') < 1) throw new Error('intent head: a backstop needs a csam class');
      if (!(b.threshold > 0 && b.threshold <= 1) || !(b.csamThreshold > 0 && b.csamThreshold <= 1))
        throw new Error('intent head: backstop thresholds out of (0, 1]');
    }
    this.classFloors = Object.entries(doc.classThresholds ?? {}).map(([c, t]) => {
      const at = doc.classes.indexOf(c);
      if (at < 1) throw new Error(`intent head: class threshold for "${c}", which is not a harm class of the head`);
      if (!(t > 0 && t <= 1)) throw new Error(`intent head: class threshold of ${c} out of (0, 1]`);
      return [at, t] as const;
    });
  }

  private readonly classFloors: ReadonlyArray<readonly [number, number]>;
  /** The backstop heads (`backstop`, one or a list), in file order; empty without one. */
  readonly backstops: readonly BackstopDoc[];

  /**
   * The harm classes (indices) whose own threshold (`classThresholds`) the probabilities `p` reach; empty for a
   * head without class thresholds. The caller applies them only to a reading the gate passes.
   */
  classesAtFloor(p: Float64Array): number[] {
    const out: number[] = [];
    for (const [c, t] of this.classFloors) if (p[c]! >= t) out.push(c);
    return out;
  }

  /**
   * Whether a backstop head (see above) refuses the reading `x` (input(), words `words`) as CSAM: for one of them,
   * the gate passes on its probabilities, and its CSAM probability reaches its CSAM threshold, or its harm reaches
   * its threshold with CSAM the most probable harm class or at least CSAM_SECOND. False without a backstop.
   */
  backstopCsam(x: Float64Array, words?: readonly string[]): boolean {
    return this.backstops.some((b) => this.refusesAsCsam(b, x, words));
  }

  private refusesAsCsam(b: BackstopDoc, x: Float64Array, words?: readonly string[]): boolean {
    const p = softmaxScores(x, b);
    if (!this.gatePasses(p, x, words)) return false;
    const csam = this.classes.indexOf('csam');
    if (p[csam]! >= b.csamThreshold) return true;
    if (1 - p[0]! < b.threshold) return false;
    let top = 1;
    for (let c = 2; c < p.length; c++) if (p[c]! > p[top]!) top = c;
    return top === csam || p[csam]! >= CSAM_SECOND;
  }

  /** The gate's probability that the reading `x` (input()) concerns a blocked topic; 1 when the head has no gate. */
  topic(x: Float64Array): number {
    const g = this.doc.gate;
    if (!g) return 1;
    return softmaxScores(x, g)[1]!;
  }

  /**
   * Whether the gate lets a reading with class probabilities `p`, input `x` and words `words` be refused:
   * its words hold a term of the gate's topic concepts, or its topic probability reaches the gate threshold
   * of its most probable harm class, or CSAM's when CSAM holds at least CSAM_SECOND. Always true without a gate.
   */
  gatePasses(p: Float64Array, x: Float64Array, words?: readonly string[]): boolean {
    const g = this.doc.gate;
    if (!g) return true;
    if (words && g.topicConcepts && this.concepts.read(words).some((c) => g.topicConcepts!.includes(c))) return true;
    let top = 1;
    for (let c = 2; c < p.length; c++) if (p[c]! > p[top]!) top = c;
    let t = g.thresholds[this.classes[top]!]!;
    const csam = this.classes.indexOf('csam');
    if (csam > 0 && p[csam]! >= CSAM_SECOND) t = Math.min(t, g.thresholds.csam!);
    return t <= 0 || this.topic(x) >= t;
  }

  readonly neighbours: Neighbours | undefined;

  /**
   * The harm of a reading: the regression's probability of not benign (`p` from probabilities()), mixed
   * with the neighbours' share of asks when the head has neighbours. Below `floor` the answer is only
   * "below floor": a reading whose regression score cannot reach it whatever its neighbours is not
   * compared with them (most readings of everyday traffic), so the cost stays that of the regression.
   */
  harm(p: Float64Array, embedding: ArrayLike<number>, floor = 0): number {
    const h = 1 - p[0]!;
    const nb = this.neighbours;
    if (!nb) return h;
    const mix = nb.doc.mix;
    let top = 1;
    for (let c = 2; c < p.length; c++) if (p[c]! > p[top]!) top = c;
    const kept = nb.doc.keep.includes(this.classes[top]!) ? h : 0;
    if (mix * h + (1 - mix) < floor) return Math.max(kept, mix * h);
    return Math.max(kept, mix * h + (1 - mix) * nb.askShare(embedding));
  }

  input(embedding: Float32Array, words: readonly string[]): Float64Array {
    if (embedding.length !== this.doc.dim) throw new Error(`intent head: embedding has ${embedding.length} numbers, expected ${this.doc.dim}`);
    return headInput(embedding, words, this.concepts, this.doc.conceptNames);
  }

  /** Class probabilities (softmax), in `classes` order. */
  probabilities(x: Float64Array): Float64Array {
    return softmaxScores(x, this.doc);
  }
}

/** A head's backstops as a list (`backstop` holds one, a list, or none). */
export function backstopsOf(doc: Pick<IntentHeadDoc, 'backstop'>): BackstopDoc[] {
  const b = doc.backstop;
  return b === undefined ? [] : Array.isArray(b) ? b : [b];
}

export function softmaxScores(x: Float64Array, p: Pick<IntentHeadDoc, 'mean' | 'scale' | 'weights' | 'bias' | 'hidden'>): Float64Array {
  const k = p.weights.length;
  let u = Float64Array.from(x, (v, j) => (v - p.mean[j]!) / p.scale[j]!);
  if (p.hidden) {
    const h = p.hidden;
    const a = new Float64Array(h.weights.length);
    for (let i = 0; i < a.length; i++) {
      const w = h.weights[i]!;
      let s = h.bias[i]!;
      for (let j = 0; j < u.length; j++) s += w[j]! * u[j]!;
      a[i] = s > 0 ? s : 0;
    }
    u = a;
  }
  const z = new Float64Array(k);
  for (let c = 0; c < k; c++) {
    const w = p.weights[c]!;
    let s = p.bias[c]!;
    for (let j = 0; j < u.length; j++) s += w[j]! * u[j]!;
    z[c] = s;
  }
  let max = -Infinity;
  for (let c = 0; c < k; c++) max = Math.max(max, z[c]!);
  let sum = 0;
  for (let c = 0; c < k; c++) sum += z[c] = Math.exp(z[c]! - max);
  for (let c = 0; c < k; c++) z[c]! /= sum;
  return z;
}

const RULES = fileURLToPath(new URL('../../../rules/', import.meta.url));

export function loadIntentHead(file: string): IntentHead {
  if (!/^[a-z0-9][a-z0-9.-]*\.json$/.test(file)) throw new Error(`intent head "${file}" must be a .json file name in rules/`);
  let doc: IntentHeadDoc;
  try {
    doc = JSON.parse(readFileSync(RULES + file, 'utf8')) as IntentHeadDoc;
  } catch (err) {
    throw new Error(`intent head "${file}" cannot be read: ${(err as Error).message}`, { cause: err });
  }
  return new IntentHead(doc);
}
