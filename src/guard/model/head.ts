/**
 * The classification head of the intent model: a multinomial logistic regression, optionally over one
 * hidden layer of rectified units (a small MLP, `hidden`), over the encoder's sentence embedding (multilingual-e5-small, 384 numbers) and the concept features of the text (does it
 * hold a word the concept list, rules/guardrails-intent-concepts.yaml, files under `ask-make`, `ask-obtain`,
 * `about-defend`, ...: the English word lists that were the whole model before, now a few inputs beside
 * the embedding). Features are standardised with the training set's mean and spread, stored in the head.
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
  evaluation?: unknown;
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
