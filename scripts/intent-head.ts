/**
 * Trains the classification head of the intent model (src/guard/model/head.ts) over the encoder's
 * embeddings of the corpus: multinomial logistic regression on standardised features (embedding and concept
 * indicators), classes weighed by their size, full-batch Adam with L2. Embeddings are computed by the same
 * encoder pool the gateway runs (worker threads, one engine each) and cached per encoder hash and text
 * under the models directory, so retraining after a corpus edit only embeds the new lines.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalise } from '../src/guard/normalise.js';
import { intentWords } from '../src/guard/intent.js';
import { encoderFiles, modelsDir, type EncoderFiles } from '../src/guard/model/encoder.js';
import { EncoderPool } from '../src/guard/model/pool.js';
import { modelText } from '../src/guard/model/readings.js';
import { HEAD_FEATURES, IntentHead, headInput, softmaxScores, type IntentHeadDoc } from '../src/guard/model/head.js';
import { ConceptMap, type IntentModelDoc } from '../src/guard/intent.js';
import { rng } from './rng.js';

/** Model input of a corpus line, as the runtime builds it for a request of that one text. */
export const readingOf = (text: string, chars: number) => {
  const t = modelText(text);
  return t.length <= chars ? t : t.slice(-chars);
};
export const wordsOf = (text: string) => intentWords(normalise(text).text);

export async function embedAll(texts: string[], files: EncoderFiles = encoderFiles()): Promise<Float32Array[]> {
  const dir = join(modelsDir(), 'embeddings');
  mkdirSync(dir, { recursive: true });
  const cacheFile = join(dir, `${files.sha256.slice(0, 16)}.json`);
  const cache: Record<string, number[]> = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : {};
  const key = (t: string) => createHash('sha256').update(t).digest('hex').slice(0, 32);
  const missing = [...new Set(texts.filter((t) => !(key(t) in cache)))];
  // Merged with the file as it is now: another process (intent-score-all.ts) may have added to it meanwhile.
  const save = () => {
    const now: Record<string, number[]> = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : {};
    writeFileSync(cacheFile, JSON.stringify({ ...now, ...cache }));
  };
  if (missing.length > 0) {
    // Every chunk is queued at once, so a chunk's time counts its wait behind the others: on a loaded machine ten
    // minutes were not enough for four thousand readings. The cache is written as it grows, so a run that fails
    // keeps what it embedded.
    const pool = new EncoderPool(files, { workers: 2, queue: missing.length, timeoutMs: 3_600_000 + missing.length * 5_000 });
    try {
      const chunks: string[][] = [];
      for (let i = 0; i < missing.length; i += 16) chunks.push(missing.slice(i, i + 16));
      let done = 0;
      await Promise.all(
        chunks.map(async (c) => {
          const vs = await pool.embed(c);
          c.forEach((t, i) => (cache[key(t)] = Array.from(vs[i]!)));
          done += c.length;
          if (done % 160 < 16) process.stderr.write(`embedded ${done}/${missing.length}\n`);
          if (done % 800 < 16) save();
        }),
      );
    } finally {
      await pool.close();
    }
    save();
  }
  return texts.map((t) => Float32Array.from(cache[key(t)]!));
}

export interface HeadTrainOptions {
  classes: string[];
  conceptNames: string[];
  concepts: IntentModelDoc['concepts'];
  encoderSha256: string;
  corpusSha256: string;
  l2?: number;
  epochs?: number;
  /** Weight of the harm classes relative to benign (1: as the corpus has them). */
  harmWeight?: number;
  /** Hidden rectified units (0 or absent: logistic regression on the inputs). */
  hidden?: number;
  /** Seed of the hidden layer's initial weights and of the mini-batch order (deterministic training). */
  seed?: number;
}

/** Mean and spread of each input over the rows, and the class weights (see trainHead). */
function prepare(rows: Array<{ x: Float64Array; y: number }>, o: HeadTrainOptions) {
  const k = o.classes.length;
  const d = rows[0]!.x.length;
  const mean = new Array<number>(d).fill(0);
  const scale = new Array<number>(d).fill(0);
  for (const r of rows) for (let j = 0; j < d; j++) mean[j]! += r.x[j]! / rows.length;
  for (const r of rows) for (let j = 0; j < d; j++) scale[j]! += (r.x[j]! - mean[j]!) ** 2 / rows.length;
  for (let j = 0; j < d; j++) scale[j] = Math.sqrt(scale[j]!) || 1;
  const xs = rows.map((r) => Float64Array.from(r.x, (v, j) => (v - mean[j]!) / scale[j]!));
  const counts = o.classes.map((_, c) => rows.filter((r) => r.y === c).length);
  const harmTotal = counts.slice(1).reduce((a, b) => a + b, 0);
  const cw = counts.map((n, c) => (c === 0 ? 1 : ((o.harmWeight ?? 1) * harmTotal) / ((k - 1) * Math.max(1, n))));
  return { k, d, mean, scale, xs, cw };
}

/**
 * The head with one hidden layer of `o.hidden` rectified units: weighted cross-entropy (the class weights of
 * trainHead), L2 on both layers, Adam over seeded mini-batches of 32. The hidden layer lets the head read
 * combinations the linear head cannot (an ask verb and a topic in the same reading, whatever the language),
 * which the cross-validation of scripts/intent-cv.ts measured as fewer false positives at the same recall.
 */
export function trainMlpHead(rows: Array<{ x: Float64Array; y: number }>, o: HeadTrainOptions): IntentHeadDoc {
  const { k, d, mean, scale, xs, cw } = prepare(rows, o);
  const H = o.hidden!;
  const rand = rng(o.seed ?? 1);
  const W1 = Float64Array.from({ length: H * d }, () => (rand() * 2 - 1) * Math.sqrt(6 / (d + H)));
  const b1 = new Float64Array(H);
  const W2 = Float64Array.from({ length: k * H }, () => (rand() * 2 - 1) * Math.sqrt(6 / (H + k)));
  const b2 = new Float64Array(k);
  const params = [W1, b1, W2, b2];
  const decay = [true, false, true, false];
  const ms = params.map((p) => new Float64Array(p.length));
  const vs = params.map((p) => new Float64Array(p.length));
  const grads = params.map((p) => new Float64Array(p.length));
  const lr = 0.002,
    beta1 = 0.9,
    beta2 = 0.999,
    eps = 1e-8,
    l2 = o.l2 ?? 1e-3,
    epochs = o.epochs ?? 60,
    batch = 32;
  const order = xs.map((_, i) => i);
  const a = new Float64Array(H),
    r = new Float64Array(H),
    z = new Float64Array(k),
    ga = new Float64Array(H);
  let t = 0;
  for (let e = 0; e < epochs; e++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let s = 0; s < order.length; s += batch) {
      for (const g of grads) g.fill(0);
      const ids = order.slice(s, s + batch);
      for (const i of ids) {
        const x = xs[i]!,
          y = rows[i]!.y;
        for (let h = 0; h < H; h++) {
          let v = b1[h]!;
          const off = h * d;
          for (let j = 0; j < d; j++) v += W1[off + j]! * x[j]!;
          a[h] = v;
          r[h] = v > 0 ? v : 0;
        }
        let max = -Infinity;
        for (let c = 0; c < k; c++) {
          let v = b2[c]!;
          for (let h = 0; h < H; h++) v += W2[c * H + h]! * r[h]!;
          z[c] = v;
          if (v > max) max = v;
        }
        let sum = 0;
        for (let c = 0; c < k; c++) sum += z[c] = Math.exp(z[c]! - max);
        ga.fill(0);
        for (let c = 0; c < k; c++) {
          const g = cw[y]! * (z[c]! / sum - (c === y ? 1 : 0));
          grads[3]![c]! += g;
          for (let h = 0; h < H; h++) {
            grads[2]![c * H + h]! += g * r[h]!;
            ga[h]! += g * W2[c * H + h]!;
          }
        }
        for (let h = 0; h < H; h++) {
          if (a[h]! <= 0) continue;
          const g = ga[h]!;
          grads[1]![h]! += g;
          const off = h * d;
          for (let j = 0; j < d; j++) grads[0]![off + j]! += g * x[j]!;
        }
      }
      t++;
      params.forEach((p, n) => {
        const g = grads[n]!,
          m = ms[n]!,
          v = vs[n]!;
        for (let j = 0; j < p.length; j++) {
          const gj = g[j]! / ids.length + (decay[n] ? l2 * p[j]! : 0);
          m[j] = beta1 * m[j]! + (1 - beta1) * gj;
          v[j] = beta2 * v[j]! + (1 - beta2) * gj * gj;
          p[j]! -= (lr * (m[j]! / (1 - beta1 ** t))) / (Math.sqrt(v[j]! / (1 - beta2 ** t)) + eps);
        }
      });
    }
  }
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  return {
    features: HEAD_FEATURES,
    encoderSha256: o.encoderSha256,
    corpusSha256: o.corpusSha256,
    classes: o.classes,
    conceptNames: o.conceptNames,
    concepts: o.concepts,
    dim: d - o.conceptNames.length,
    mean: mean.map(r6),
    scale: scale.map(r6),
    hidden: { weights: Array.from({ length: H }, (_, h) => Array.from(W1.subarray(h * d, h * d + d), r4)), bias: Array.from(b1, r4) },
    weights: Array.from({ length: k }, (_, c) => Array.from(W2.subarray(c * H, c * H + H), r4)),
    bias: Array.from(b2, r4),
  };
}

export function trainHead(rows: Array<{ x: Float64Array; y: number }>, o: HeadTrainOptions): IntentHeadDoc {
  const k = o.classes.length;
  const d = rows[0]!.x.length;
  const mean = new Array<number>(d).fill(0);
  const scale = new Array<number>(d).fill(0);
  for (const r of rows) for (let j = 0; j < d; j++) mean[j]! += r.x[j]! / rows.length;
  for (const r of rows) for (let j = 0; j < d; j++) scale[j]! += (r.x[j]! - mean[j]!) ** 2 / rows.length;
  for (let j = 0; j < d; j++) scale[j] = Math.sqrt(scale[j]!) || 1;
  const xs = rows.map((r) => Float64Array.from(r.x, (v, j) => (v - mean[j]!) / scale[j]!));
  // Harm classes are weighed equally among themselves (CSAM has the fewest lines) and together as much as
  // the corpus has them, times harmWeight: weighing them up to benign's size taught the head that any
  // non-English text about a harm topic is an ask.
  const counts = o.classes.map((_, c) => rows.filter((r) => r.y === c).length);
  const harmTotal = counts.slice(1).reduce((a, b) => a + b, 0);
  const cw = counts.map((n, c) => (c === 0 ? 1 : ((o.harmWeight ?? 1) * harmTotal) / ((k - 1) * Math.max(1, n))));
  const W = Array.from({ length: k }, () => new Float64Array(d));
  const b = new Float64Array(k);
  const m = Array.from({ length: k }, () => new Float64Array(d + 1));
  const v = Array.from({ length: k }, () => new Float64Array(d + 1));
  const lr = 0.01,
    beta1 = 0.9,
    beta2 = 0.999,
    eps = 1e-8,
    l2 = o.l2 ?? 3e-3,
    epochs = o.epochs ?? 500;
  for (let t = 1; t <= epochs; t++) {
    const gW = Array.from({ length: k }, () => new Float64Array(d));
    const gb = new Float64Array(k);
    xs.forEach((x, i) => {
      const y = rows[i]!.y;
      const z = new Float64Array(k);
      for (let c = 0; c < k; c++) {
        let s = b[c]!;
        const w = W[c]!;
        for (let j = 0; j < d; j++) s += w[j]! * x[j]!;
        z[c] = s;
      }
      const max = Math.max(...z);
      let sum = 0;
      for (let c = 0; c < k; c++) sum += z[c] = Math.exp(z[c]! - max);
      for (let c = 0; c < k; c++) {
        const g = cw[y]! * (z[c]! / sum - (c === y ? 1 : 0));
        gb[c]! += g;
        const gw = gW[c]!;
        for (let j = 0; j < d; j++) gw[j]! += g * x[j]!;
      }
    });
    for (let c = 0; c < k; c++) {
      for (let j = 0; j <= d; j++) {
        const p = j < d ? W[c]![j]! : b[c]!;
        const g = (j < d ? gW[c]![j]! : gb[c]!) / rows.length + (j < d ? l2 * p : 0);
        m[c]![j] = beta1 * m[c]![j]! + (1 - beta1) * g;
        v[c]![j] = beta2 * v[c]![j]! + (1 - beta2) * g * g;
        const step = (lr * (m[c]![j]! / (1 - beta1 ** t))) / (Math.sqrt(v[c]![j]! / (1 - beta2 ** t)) + eps);
        if (j < d) W[c]![j]! -= step;
        else b[c]! -= step;
      }
    }
  }
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  return {
    features: HEAD_FEATURES,
    encoderSha256: o.encoderSha256,
    corpusSha256: o.corpusSha256,
    classes: o.classes,
    conceptNames: o.conceptNames,
    concepts: o.concepts,
    dim: d - o.conceptNames.length,
    mean: mean.map(r6),
    scale: scale.map(r6),
    weights: W.map((w) => Array.from(w, r6)),
    bias: Array.from(b, r6),
  };
}

/** Head input rows of examples (embedding of its reading + concept indicators of its words). */
export function headRows(texts: string[], vectors: Float32Array[], conceptDoc: IntentModelDoc['concepts'], names: string[]): Float64Array[] {
  const concepts = new ConceptMap(conceptDoc);
  return texts.map((t, i) => headInput(vectors[i]!, wordsOf(t), concepts, names));
}

export { IntentHead, softmaxScores };
