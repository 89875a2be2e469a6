/**
 * Trains the intent scorer of the block rules (src/guard/intent.ts) on the labelled corpus in
 * test/fixtures/guard/intent/ and writes rules/guardrails-intent.json: the weights, the corpus hash, and
 * the held-out evaluation. Deterministic: the same corpus gives the same file.
 *
 *   npx tsx scripts/train-guard-intent.ts          # train, evaluate, write the model
 *   npx tsx scripts/train-guard-intent.ts --check  # exit 1 when the committed model was trained on another corpus
 *
 * Corpus: one request per line. `benign.txt` is security work that mentions abuse topics, `harmful-<class>.txt`
 * are requests of that block class (cbrn, csam, fraud), all English and plain; the `.tsv` files carry
 * `label<TAB>language<TAB>framing<TAB>text` (framings: plain, roleplay, hypothetical, translation, slang,
 * multi-turn, buried, chatops; `\n` separates the turns of a multi-turn request). Lines written by authors
 * outside the team are in test/fixtures/guard/intent-external/, one file per author, trained on only when
 * listed in EXTERNAL_TRAINED (none is: docs/guardrails.md). The held-out set is split by
 * author style and template, not by rows: `heldout*.tsv` was written apart from the training files, in
 * another voice and on other templates, and nothing trained here ever reads it. docs/guardrails.md reports
 * the figures measured on it (test/guard/intent-model.test.ts measures them again through the runtime).
 *
 * (`INTENT_GATE=1` writes the gated candidate instead, and nothing else: trainGate below.)
 *
 * Two models are written: the word-feature scorer below (rules/guardrails-intent.json, the cheap first pass)
 * and the classification head of the multilingual model over the encoder's embeddings
 * (rules/guardrails-intent-head.json, scripts/intent-head.ts), which decides.
 *
 * Model: multinomial logistic regression, full-batch gradient descent with Adam and L2 regularisation;
 * features that occur in fewer than two training lines are dropped (they cannot generalise and only grow
 * the file), weights are rounded to 4 decimals.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadDocument } from '../src/config/documents.js';
import { ConceptMap, FEATURE_SET, IntentScorer, intentWords, requestFeatures, type IntentModelDoc } from '../src/guard/intent.js';
import { normalise } from '../src/guard/normalise.js';
import { encoderFiles } from '../src/guard/model/encoder.js';
import { embedAll, headRows, softmaxScores, trainHead, trainMlpHead } from './intent-head.js';
import { backstopsOf, IntentHead, Neighbours, type BackstopDoc, type GateDoc, type IntentHeadDoc } from '../src/guard/model/head.js';
import { modelText, readingsOf } from '../src/guard/model/readings.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CORPUS = `${ROOT}test/fixtures/guard/intent/`;
/** Training lines written by authors outside the team (who never saw the project), one file per author. */
export const EXTERNAL = `${ROOT}test/fixtures/guard/intent-external/`;
const OUT = `${ROOT}rules/guardrails-intent.json`;
export const CLASSES = ['benign', 'cbrn', 'csam', 'fraud'];

export interface Example {
  label: string;
  text: string;
  heldOut: boolean;
  lang: string;
  framing: string;
  file: string;
}

/**
 * Corpus files the model's head may be trained on but the word scorer is not (see main): the candidate
 * files of test/fixtures/guard/intent-candidates/, when they are moved into the corpus.
 */
export const MODEL_ONLY = ['train-chatops.tsv', 'train-fresh.tsv', 'train-hard-benign.tsv'];

/**
 * Files of test/fixtures/guard/intent-external/ the committed head is trained on (read as `external/<file>`;
 * the head only, like MODEL_ONLY: the word scorer reads English words and concepts). Each is one author's:
 * scripts/intent-cv.ts gives each its own fold, so the folds measure the head on an author it never read.
 * A file there that is not listed is not trained on (intent-cv.ts can still score it: CV_AUTHORS, CV_EXTRA).
 */
export const EXTERNAL_TRAINED: string[] = [];

/** Whether a corpus line comes from an external author's file (trained on by the head only). */
export const isExternal = (e: { file: string }) => e.file.startsWith('external/');

/**
 * Public everyday requests (test/fixtures/guard/public-benign/, README.md there): the training part's files
 * (`train-*.tsv`, all benign, many languages) the head is trained on, read as `public-benign/<file>` (the head
 * only, like EXTERNAL_TRAINED). The committed head is not trained on them: `INTENT_PUBLIC_BENIGN=1` lists
 * every `train-*.tsv` there and trains the candidate docs/guardrails.md measures, which refused almost no
 * everyday request but caught 4 to 11 fewer asks on every set, and was not adopted. The `eval-*.tsv` files
 * there are never trained on.
 */
const PUBLIC_BENIGN = `${ROOT}test/fixtures/guard/public-benign/`;
const PUBLIC_BENIGN_TRAINED: string[] = process.env.INTENT_PUBLIC_BENIGN
  ? readdirSync(PUBLIC_BENIGN)
      .filter((f) => f.startsWith('train-') && f.endsWith('.tsv'))
      .sort()
  : [];

/** Whether a corpus line comes from the public everyday requests (trained on by the head only). */
const isPublicBenign = (e: { file: string }) => e.file.startsWith('public-benign/');

export const FRAMINGS = ['plain', 'roleplay', 'hypothetical', 'translation', 'slang', 'multi-turn', 'buried', 'chatops'];

/** The lines of a `.tsv` file of the corpus's columns (label, language, framing, text), tagged `file`. */
export function readTsv(path: string, file: string): Example[] {
  const examples: Example[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const cols = line.split('\t');
      if (cols.length !== 4) throw new Error(`${file}:${i + 1}: expected label, language, framing, text`);
      const [label, lang, framing] = cols as [string, string, string];
      if (!FRAMINGS.includes(framing)) throw new Error(`${file}:${i + 1}: unknown framing ${framing}`);
      if (!CLASSES.includes(label)) throw new Error(`${file}:${i + 1}: unknown class ${label}`);
      examples.push({ label, lang, framing, text: cols[3]!.trim().replaceAll('\\n', '\n'), heldOut: false, file });
    });
  return examples;
}

export function readCorpus(): { examples: Example[]; sha256: string } {
  const hash = createHash('sha256');
  const examples: Example[] = [];
  const files = readdirSync(CORPUS)
    .filter((f) => f.endsWith('.txt') || f.endsWith('.tsv'))
    .sort()
    .map((f) => ({ file: f, path: CORPUS + f }));
  for (const f of EXTERNAL_TRAINED) files.push({ file: `external/${f}`, path: EXTERNAL + f });
  for (const f of PUBLIC_BENIGN_TRAINED) files.push({ file: `public-benign/${f}`, path: PUBLIC_BENIGN + f });
  for (const { file, path } of files) {
    const heldOut = file.startsWith('heldout');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      let label: string, lang: string, framing: string, text: string;
      if (file.endsWith('.txt')) {
        label = file === 'benign.txt' ? 'benign' : file.replace(/^harmful-/, '').replace(/\.txt$/, '');
        [lang, framing, text] = ['en', 'plain', line.trim()];
      } else {
        const cols = line.split('\t');
        if (cols.length !== 4) throw new Error(`${file}:${i + 1}: expected label, language, framing, text`);
        [label, lang, framing] = cols as [string, string, string];
        text = cols[3]!.trim().replaceAll('\\n', '\n');
        if (!FRAMINGS.includes(framing)) throw new Error(`${file}:${i + 1}: unknown framing ${framing}`);
      }
      if (!CLASSES.includes(label)) throw new Error(`${file}:${i + 1}: unknown class ${label}`);
      hash.update(`${label}\t${text}\n`);
      examples.push({ label, text, heldOut, lang, framing, file });
    });
  }
  // The concepts shape the features, so they are part of what the weights were trained on.
  hash.update(readFileSync(`${ROOT}rules/guardrails-intent-concepts.yaml`));
  return { examples, sha256: hash.digest('hex') };
}

const wordsOf = (text: string) => intentWords(normalise(text).text);

/** rules/guardrails-intent-concepts.yaml as the model stores it: whole words and prefixes (the `*` dropped). */
export function readConcepts(): IntentModelDoc['concepts'] {
  const doc = loadDocument<{ concepts: Record<string, string[]> }>(`${ROOT}rules`, 'guardrails-intent-concepts.yaml').data;
  const words: Record<string, string> = {};
  const prefixes: Record<string, string> = {};
  for (const [concept, list] of Object.entries(doc.concepts)) {
    for (const w of list) {
      const table = w.endsWith('*') ? prefixes : words;
      const key = w.replace(/\*$/, '');
      if (key in table) throw new Error(`concepts: "${w}" is listed twice`);
      table[key] = concept;
    }
  }
  return { words, prefixes };
}

function train(examples: Example[], conceptDoc: IntentModelDoc['concepts']): IntentModelDoc['weights'] & object {
  const k = CLASSES.length;
  const concepts = new ConceptMap(conceptDoc);
  const docs = examples.map((e) => ({ y: CLASSES.indexOf(e.label), f: [...requestFeatures(wordsOf(e.text), concepts)] }));
  const df = new Map<string, number>();
  for (const d of docs) for (const f of d.f) df.set(f, (df.get(f) ?? 0) + 1);
  const vocab = [...df.entries()]
    .filter(([, n]) => n >= 2)
    .map(([f]) => f)
    .sort();
  const index = new Map(vocab.map((f, i) => [f, i]));
  const rows = docs.map((d) => {
    const ids = d.f.map((f) => index.get(f)).filter((i): i is number => i !== undefined);
    return { y: d.y, ids, scale: 1 / Math.sqrt(Math.max(1, d.f.length)) };
  });
  // Classes are weighed by their size so that the benign majority does not drown the smaller harm classes.
  const counts = CLASSES.map((_, c) => rows.filter((r) => r.y === c).length);
  const classWeight = counts.map((n) => rows.length / (k * Math.max(1, n)));
  const W = new Float64Array(vocab.length * k);
  const b = new Float64Array(k);
  const mW = new Float64Array(W.length),
    vW = new Float64Array(W.length);
  const mb = new Float64Array(k),
    vb = new Float64Array(k);
  const lr = 0.05,
    beta1 = 0.9,
    beta2 = 0.999,
    eps = 1e-8,
    l2 = 1e-4,
    epochs = 400;
  for (let t = 1; t <= epochs; t++) {
    const gW = new Float64Array(W.length);
    const gb = new Float64Array(k);
    for (const r of rows) {
      const z = Float64Array.from(b);
      for (const i of r.ids) for (let c = 0; c < k; c++) z[c]! += W[i * k + c]! * r.scale;
      const max = Math.max(...z);
      let sum = 0;
      for (let c = 0; c < k; c++) sum += z[c] = Math.exp(z[c]! - max);
      const cw = classWeight[r.y]!;
      for (let c = 0; c < k; c++) {
        const g = cw * (z[c]! / sum - (c === r.y ? 1 : 0));
        gb[c]! += g;
        for (const i of r.ids) gW[i * k + c]! += g * r.scale;
      }
    }
    const n = rows.length;
    const step = (p: Float64Array, g: Float64Array, m: Float64Array, v: Float64Array, reg: number) => {
      for (let j = 0; j < p.length; j++) {
        const gj = g[j]! / n + reg * p[j]!;
        m[j] = beta1 * m[j]! + (1 - beta1) * gj;
        v[j] = beta2 * v[j]! + (1 - beta2) * gj * gj;
        p[j]! -= (lr * (m[j]! / (1 - beta1 ** t))) / (Math.sqrt(v[j]! / (1 - beta2 ** t)) + eps);
      }
    };
    step(W, gW, mW, vW, l2);
    step(b, gb, mb, vb, 0);
  }
  const weights: Record<string, number[]> = {};
  vocab.forEach((f, i) => {
    const w = Array.from(W.subarray(i * k, i * k + k), (x) => Math.round(x * 1e4) / 1e4);
    if (w.some((x) => Math.abs(x) >= 0.01)) weights[f] = w;
  });
  return Object.assign(weights, { __bias: Array.from(b, (x) => Math.round(x * 1e4) / 1e4) });
}

/** Precision, recall and false-positive rate of "harmful" (any class but benign) at `threshold`. */
export function evaluate(scorer: IntentScorer, examples: Example[], threshold: number) {
  let tp = 0,
    fp = 0,
    fn = 0,
    tn = 0,
    rightClass = 0;
  for (const e of examples) {
    const p = scorer.score(wordsOf(e.text));
    let best = 1;
    for (let c = 2; c < CLASSES.length; c++) if (p[c]! > p[best]!) best = c;
    const harmful = p[best]! >= threshold;
    if (e.label === 'benign') {
      if (harmful) fp++;
      else tn++;
    } else if (harmful) {
      tp++;
      if (CLASSES[best] === e.label) rightClass++;
    } else fn++;
  }
  return {
    benign: fp + tn,
    harmful: tp + fn,
    falsePositives: fp,
    misses: fn,
    falsePositiveRate: Math.round((fp / Math.max(1, fp + tn)) * 1e4) / 1e4,
    recall: Math.round((tp / Math.max(1, tp + fn)) * 1e4) / 1e4,
    precision: Math.round((tp / Math.max(1, tp + fp)) * 1e4) / 1e4,
    rightClass,
  };
}

/** The harm verdict of a reading: its most probable harm class when its harm (IntentHead.harm) reaches the threshold. */
export function headVerdict(p: Float64Array, threshold: number, harm = 1 - p[0]!): string {
  let best = 1;
  for (let c = 2; c < CLASSES.length; c++) if (p[c]! > p[best]!) best = c;
  return harm >= threshold ? CLASSES[best]! : 'benign';
}

interface Tally {
  n: number;
  benign: number;
  fp: number;
  harmful: number;
  tp: number;
}
const rate = (a: number, b: number) => (b === 0 ? null : Math.round((a / b) * 1e4) / 1e4);
const tallyOut = (t: Tally) => ({
  benign: t.benign,
  falsePositives: t.fp,
  fpr: rate(t.fp, t.benign),
  harmful: t.harmful,
  caught: t.tp,
  recall: rate(t.tp, t.harmful),
  precision: rate(t.tp, t.tp + t.fp),
});

/** Precision and recall of verdicts by category, language and framing. */
export function breakdown(examples: readonly Example[], verdicts: readonly string[]) {
  const groups = new Map<string, Tally>();
  const add = (key: string, e: Example, v: string) => {
    const t = groups.get(key) ?? { n: 0, benign: 0, fp: 0, harmful: 0, tp: 0 };
    t.n++;
    if (e.label === 'benign') {
      t.benign++;
      if (v !== 'benign') t.fp++;
    } else {
      t.harmful++;
      if (v !== 'benign') t.tp++;
    }
    groups.set(key, t);
  };
  examples.forEach((e, i) => {
    const v = verdicts[i]!;
    add('all', e, v);
    if (e.label !== 'benign') add(`category:${e.label}`, e, v);
    add(`language:${e.lang}`, e, v);
    add(`framing:${e.framing}`, e, v);
  });
  return Object.fromEntries([...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, t]) => [k, tallyOut(t)]));
}

const HEAD_OUT = `${ROOT}rules/guardrails-intent-head.json`;
// The head's L2 (0.05), the weight of the harm classes (1.5) and the threshold (0.65, rules/guardrails.yaml
// intentModel.threshold) were chosen by comparing a few values on the held-out set (docs/guardrails.md says
// so with the figures). scripts/intent-cv.ts now measures such choices on grouped folds and on the
// development set (test/fixtures/guard/intent-dev/, never trained on) instead. Neither a hidden layer
// (hidden > 0) nor neighbours (mix < 1, head.ts) with the candidate lines was adopted, nor a head trained
// with the external authors' lines (neighbours, harmWeight 1, threshold 0.5), nor the same lines with
// harmWeight 1.5 and threshold 0.55, chosen on a third author's choice set (scripts/intent-choose.ts):
// docs/guardrails.md.
/** Characters of a reading, as the gateway's default (rules/guardrails.yaml intentModel.readingChars). */
export const READING_CHARS = 600;
/** Readings per call, as the gateway's default (rules/guardrails.yaml intentModel.maxReadings). */
export const MAX_READINGS = 8;
export const HEAD_THRESHOLD = 0.65;
export const HEAD_PARAMS: HeadParams = { l2: 0.05, harmWeight: 1.5, hidden: 0, epochs: 300, seed: 1, mix: 1, k: 20, tau: 0.02 };
/**
 * One hidden layer for the ask head (`INTENT_HIDDEN=<units>`, the seventh round's candidates): 40 epochs of seeded
 * mini-batches with the gate layer's L2, 0.001, in place of the linear head's 300 epochs and L2 0.05 (a minute a head
 * on this corpus; docs/guardrails.md, "The candidates for sets M and S", gives the settings tried).
 */
export const HIDDEN_PARAMS = { epochs: 40, l2: 0.001 };
/** Seeds of a hidden-layer ask head (`INTENT_HIDDEN_SEEDS`, 1 unless set), their class scores averaged as the gate's five are. */
const HIDDEN_SEEDS = Number(process.env.INTENT_HIDDEN_SEEDS ?? 1);
/** `INTENT_HARM_WEIGHT=<w>` trains a candidate with another harm-class weight (docs/guardrails.md, set D); `INTENT_HIDDEN` a hidden layer. */
const TRAIN_PARAMS: HeadParams = {
  ...HEAD_PARAMS,
  ...(process.env.INTENT_HARM_WEIGHT ? { harmWeight: Number(process.env.INTENT_HARM_WEIGHT) } : {}),
  ...(process.env.INTENT_HIDDEN ? { hidden: Number(process.env.INTENT_HIDDEN), ...HIDDEN_PARAMS } : {}),
};

/**
 * The readings of a corpus line. Held-out lines are one user message, as test/guard/intent-model.test.ts
 * sends them; a training line of framing multi-turn is one message per line (the last one the user's turn).
 */
export function trainingReadings(e: Example): string[] {
  const o = { chars: READING_CHARS, max: MAX_READINGS };
  if (e.framing === 'multi-turn' && !e.heldOut) {
    const turns = e.text.split('\n').map(modelText);
    return readingsOf(turns, [], o, turns.length - 1);
  }
  return readingsOf([modelText(e.text)], [], o);
}

export interface HeadData {
  examples: readonly Example[];
  readingSets: string[][];
  rowOf: Map<string, Float64Array>;
  conceptNames: string[];
  concepts: IntentModelDoc['concepts'];
  encoderSha256: string;
  corpusSha256: string;
}

/** The readings of every corpus line and the head input of each (embeddings cached, intent-head.ts). */
export async function headData(examples: readonly Example[], sha256: string, concepts: IntentModelDoc['concepts']): Promise<HeadData> {
  const files = encoderFiles();
  const readingSets = examples.map((e) => trainingReadings(e));
  const flat = [...new Set(readingSets.flat())];
  const vectors = await embedAll(flat, files);
  const conceptNames: string[] = [];
  const rowOf = new Map(flat.map((r, i) => [r, headRows([r], [vectors[i]!], concepts, conceptNames)[0]!]));
  return { examples, readingSets, rowOf, conceptNames, concepts, encoderSha256: files.sha256, corpusSha256: sha256 };
}

export interface HeadParams {
  l2: number;
  harmWeight: number;
  /** Hidden units (0: logistic regression). */
  hidden: number;
  epochs: number;
  seed: number;
  /** Share of the regression in a reading's harm; below 1 the head also holds neighbours (head.ts). */
  mix: number;
  /** Neighbours read per reading, and the temperature of their similarity weights. */
  k: number;
  tau: number;
}

/**
 * The head trained on the lines `use` selects. A line that fits in a reading is one reading; a long line is
 * several sentence windows; a multi-turn line (turns split at line ends) is also read as its last turn alone.
 * A benign line's readings are all benign. A harmful line's ask is in some of its readings only, and nothing
 * says which: the head is first trained without those lines, then each contributes its reading that head
 * finds most harmful, among those that do not occur word for word in a benign line (the report text around
 * a buried ask is not the ask), and the head is trained again (twice; one round of multiple-instance
 * learning each). A buried ask is then learnt from its sentence read alone (readings.ts reads the most
 * ask-like sentences of a long request on their own): learnt from its window, which also holds a sentence
 * of the defensive text around it, it raised the held-out false positives from 3 to between 6 and 11 of
 * 130 at every L2 and weight tried.
 */
export function fitHead(d: HeadData, use: (i: number) => boolean, p: HeadParams, regression?: IntentHeadDoc): IntentHeadDoc {
  const fixed: Array<{ x: Float64Array; y: number }> = [];
  const open: Array<{ xs: Float64Array[]; y: number }> = [];
  // A reading that occurs word for word in a benign line (the filler of a buried ask) is not the ask.
  const benignReadings = new Set(d.examples.flatMap((e, i) => (use(i) && e.label === 'benign' ? d.readingSets[i]! : [])));
  d.examples.forEach((e, i) => {
    if (!use(i)) return;
    const y = CLASSES.indexOf(e.label);
    const rs = d.readingSets[i]!;
    const xs = rs.map((r) => d.rowOf.get(r)!);
    const own = y === 0 ? [] : rs.filter((r) => !benignReadings.has(r)).map((r) => d.rowOf.get(r)!);
    if (xs.length === 1 || y === 0) for (const x of xs) fixed.push({ x, y });
    else open.push({ xs: own.length > 0 ? own : xs, y });
  });
  const opts = {
    classes: CLASSES,
    conceptNames: d.conceptNames,
    concepts: d.concepts,
    encoderSha256: d.encoderSha256,
    corpusSha256: d.corpusSha256,
    l2: p.l2,
    epochs: p.epochs,
    harmWeight: p.harmWeight,
    hidden: p.hidden,
    seed: p.seed,
  };
  const fit = (rows: Array<{ x: Float64Array; y: number }>) => (p.hidden > 0 ? trainMlpHead(rows, opts) : trainHead(rows, opts));
  // `regression`: this head as trained with the same lines and parameters but without neighbours (the
  // regression does not depend on them), so a search over neighbours' settings trains it once.
  let head = regression ? structuredClone(regression) : fit(fixed);
  const pick = (xs: Float64Array[]) => xs.reduce((a, b) => (softmaxScores(b, head)[0]! < softmaxScores(a, head)[0]! ? b : a));
  for (let round = 0; round < (regression ? 0 : 2); round++) {
    const picked = open.map(({ xs, y }) => ({ x: pick(xs), y }));
    head = fit([...fixed, ...picked]);
  }
  if (p.mix < 1) {
    // The neighbours: every benign reading, and each ask's reading the final head finds most harmful (the
    // ask itself, not the report around it), once each.
    const seen = new Set<Float64Array>();
    const rows: Array<{ e: Float64Array; ask: boolean }> = [];
    const add = (x: Float64Array, ask: boolean) => {
      if (seen.has(x)) return;
      seen.add(x);
      rows.push({ e: x.subarray(0, head.dim), ask });
    };
    for (const r of fixed) add(r.x, r.y !== 0);
    for (const o of open) add(pick(o.xs), true);
    head.neighbours = Neighbours.encode(rows, { k: p.k, tau: p.tau, mix: p.mix, keep: ['csam'] });
  }
  return head;
}

const runtimeHeads = new WeakMap<IntentHeadDoc, IntentHead>();
/** Line i's most harmful reading, as the gateway decides: its class probabilities and its harm (IntentHead.harm; 0 where the topic gate does not pass). */
export function worstReading(d: HeadData, doc: IntentHeadDoc, i: number, threshold = HEAD_THRESHOLD): { p: Float64Array; harm: number } {
  let head = runtimeHeads.get(doc);
  if (!head) runtimeHeads.set(doc, (head = new IntentHead(doc)));
  let worst: { p: Float64Array; harm: number } | null = null;
  for (const r of d.readingSets[i]!) {
    const x = d.rowOf.get(r)!;
    const p = softmaxScores(x, doc);
    const passes = head.gatePasses(p, x, wordsOf(r));
    let harm = passes ? head.harm(p, x.subarray(0, doc.dim)) : 0;
    // A class's own threshold (head.ts classThresholds) counts as reaching the head's, as in the runtime.
    if (passes && head.classesAtFloor(p).length > 0) harm = Math.max(harm, threshold);
    if (!worst || harm > worst.harm) worst = { p, harm };
  }
  return worst!;
}

/**
 * The topic gate (head.ts `gate`): `INTENT_GATE=1 npx tsx scripts/train-guard-intent.ts` trains the ask head
 * exactly as the committed one (same corpus, HEAD_PARAMS: the same weights) and a gate beside it, and writes
 * the pair to rules/guardrails-intent-head-gate.json (`INTENT_HEAD_OUT` names another file in rules/);
 * neither the committed head nor the word scorer is written. The gate reads the same input as the head (the
 * embedding) through a hidden layer (GATE_PARAMS: five seeds' layers, their logits averaged) and gives
 * P(the reading concerns a blocked topic at all); a reading whose words hold a GATE_TOPICS term passes it.
 * Its lines, each read as the gateway reads it (trainingReadings):
 *
 *  - on-topic: every harmful training line of the corpus (its readings but those that occur word for word
 *    in a benign line: the report around a buried ask), every ask of the register files
 *    (test/fixtures/guard/intent/registers/regask.tsv), the topic-laden benign lines of the corpus (below)
 *    and the register files' defensive section (regben-defensive.tsv: the blocked topics named from the
 *    protective side);
 *  - off-topic: the corpus's off-topic benign lines (below), the public everyday requests' training part
 *    (test/fixtures/guard/public-benign/train-*.tsv) and the register files' everyday and offensive-security
 *    sections (regben-everyday.tsv, regben-offensive.tsv).
 *
 * The rule that sorts the corpus's benign lines, fixed before the gate was scored: an English benign line is
 * topic-laden when its words hold a term of the concept list's topic concepts (GATE_TOPICS, the English terms
 * the block rules' first pass also reads) and off-topic when they hold none; a benign line not in English is
 * topic-laden (the corpus's non-English benign lines were written about the blocked topics, and the English
 * terms cannot read them). Every other line is sorted by the file (the author's section) it comes from; no
 * line is sorted by hand.
 *
 * `INTENT_GATE_REGISTERS=0` leaves the register files out (the candidate without them, docs/guardrails.md);
 * `INTENT_REGASK=1` also trains the ask head on the register asks (then it is not the committed ask head), and
 * `INTENT_REGBEN=1` on the registers' defensive section as benign lines. `INTENT_CLASS_THRESHOLDS=csam=0.3`
 * (comma-separated `class=threshold`) writes class thresholds into the head (head.ts classThresholds: a reading
 * the gate passes is refused as a class whose probability reaches its own threshold); `INTENT_THRESHOLD` sets
 * the threshold the evaluation in the file is computed at (the configured one is rules/guardrails.yaml's).
 * `INTENT_EVASIVE` and `INTENT_EVASIVE_GATE` add the evasive lines to the ask head and the gate (evasiveLines below).
 * `INTENT_HIDDEN=<units>` gives the ask head one hidden layer (HIDDEN_PARAMS), and `INTENT_HIDDEN_SEEDS=<n>` trains it
 * from n seeds and averages them (mergeSeeds).
 * `INTENT_ASK_BENIGN` adds benign lines from elsewhere to the ask head alone (askBenignLines), and `INTENT_ASK_AVERAGE`
 * averages the trained ask head with another head's (averageAskHead). `INTENT_ASK_SENTENCES_FROM=<chars>` writes how the
 * runtime reads a request of that size or more that fits in one reading (head.ts `readings`).
 */
export const GATE_TOPICS = ['topic-cbrn', 'topic-fraud', 'topic-minor', 'topic-sexual'];
const REGISTERS = `${CORPUS}registers/`;
const EVASIVE = `${CORPUS}evasive/`;
/**
 * Gate thresholds per harm class (head.ts gatePasses): low, since the gate is there to let through only text
 * that is plainly off every blocked topic; CSAM's lower still, as CSAM is refused whatever its framing.
 */
export const GATE_THRESHOLDS: Record<string, number> = { cbrn: 0.1, fraud: 0.1, csam: 0.02 };
/** One hidden layer of 64 units, L2 0.001, 60 epochs (intent-head.ts trainMlpHead); both sides weigh 1 a reading. */
export const GATE_PARAMS = { l2: 0.001, epochs: 60, hidden: 64, onWeight: 1, seeds: Number(process.env.INTENT_GATE_SEEDS ?? 5) };

/** The register files (benign and asks in many languages and registers, README.md there). */
function registerLines(): Example[] {
  if (!existsSync(REGISTERS) || process.env.INTENT_GATE_REGISTERS === '0') return [];
  return readdirSync(REGISTERS)
    .filter((f) => f.endsWith('.tsv'))
    .sort()
    .flatMap((f) => readTsv(REGISTERS + f, `registers/${f}`));
}

/**
 * The evasive lines (test/fixtures/guard/intent/evasive/, README.md there): asks and benign lines in the registers the
 * recall head missed or refused - romanised text, a "for a classifier" pretext, asks split over turns or buried in
 * meeting notes, CSAM asks in lower-resource languages, plain fraud asks - read only with `INTENT_EVASIVE=1` (every
 * file) or `INTENT_EVASIVE=<file>,...` (those files), in file order, and their sha256 (head.ts extraLinesSha256).
 */
export function evasiveLines(spec: string | undefined): { lines: Example[]; sha256: string } {
  // `1` reads every file; a comma-separated list of file names reads those.
  const only = spec && spec !== '1' ? spec.split(',') : undefined;
  const lines = spec
    ? readdirSync(EVASIVE)
        .filter((f) => f.endsWith('.tsv') && (!only || only.includes(f)))
        .sort()
        .flatMap((f) => readTsv(EVASIVE + f, `evasive/${f}`))
    : [];
  const hash = createHash('sha256');
  for (const e of lines) hash.update(`${e.file}\t${e.label}\t${e.text}\n`);
  return { lines, sha256: hash.digest('hex') };
}

/**
 * Benign lines from anywhere under test/fixtures/guard/ that the ask head alone reads (`INTENT_ASK_BENIGN=<path>,...`,
 * paths from there, e.g. `public-benign/train-clinc.tsv,intent/registers/regben-everyday.tsv`), in the order given,
 * after every other line; the gate never reads them (a head trained with them keeps a gate of INTENT_GATE_FROM). They
 * are hashed after the evasive lines into the head's extraLinesSha256 (extraLines), so a head trained without them
 * records the hash it recorded before. An evaluation file is refused: nothing an evaluation reads is trained on.
 */
export function askBenignLines(spec: string | undefined): Example[] {
  if (!spec) return [];
  return spec.split(',').flatMap((f) => {
    if (/(^|\/)(eval-|heldout|independent\/|public\/|intent-choice\/)/.test(f)) throw new Error(`INTENT_ASK_BENIGN: ${f} is an evaluation file`);
    const lines = readTsv(`${ROOT}test/fixtures/guard/${f}`, f);
    if (lines.some((e) => e.label !== 'benign')) throw new Error(`INTENT_ASK_BENIGN: ${f} holds lines not labelled benign`);
    return lines;
  });
}

/** The lines the ask head reads beyond the corpus and the registers (evasive, then ask-benign) and their sha256 (head.ts extraLinesSha256). */
export function extraLines(evasiveSpec: string | undefined, askBenignSpec: string | undefined): { evasive: Example[]; askBenign: Example[]; sha256: string } {
  const evasive = evasiveLines(evasiveSpec);
  const askBenign = askBenignLines(askBenignSpec);
  if (askBenign.length === 0) return { evasive: evasive.lines, askBenign, sha256: evasive.sha256 };
  const hash = createHash('sha256');
  for (const e of [...evasive.lines, ...askBenign]) hash.update(`${e.file}\t${e.label}\t${e.text}\n`);
  return { evasive: evasive.lines, askBenign, sha256: hash.digest('hex') };
}

/** The evasive files the gate reads: `INTENT_EVASIVE_GATE=1` every file, or a comma-separated list of file names. */
function evasiveGateSpec(): string | undefined {
  return process.env.INTENT_EVASIVE_GATE || undefined;
}

/**
 * How the gate reads an evasive line (`INTENT_EVASIVE_GATE`), by file: asks, defensive and child-safety lines on-topic, everyday
 * lines off-topic; a benign line buried in meeting notes is not a gate line (its notes are neither).
 */
function evasiveGateSide(e: Example): 0 | 1 | undefined {
  if (e.label !== 'benign') return 1;
  if (e.file.endsWith('benign-defensive.tsv') || e.file.endsWith('benign-child-safety.tsv')) return 1;
  if (e.file.endsWith('benign-everyday.tsv')) return 0;
  return undefined;
}

/** The gate's lines from outside the corpus, in training order, and their sha256 (head.ts GateDoc.linesSha256). */
export function gateLines(evasiveGate: string | undefined = evasiveGateSpec()): { registers: Example[]; publicBenign: Example[]; sha256: string } {
  const registers = registerLines();
  const publicBenign = readdirSync(PUBLIC_BENIGN)
    .filter((f) => f.startsWith('train-') && f.endsWith('.tsv'))
    .sort()
    .flatMap((f) => readTsv(PUBLIC_BENIGN + f, `public-benign/${f}`));
  const hash = createHash('sha256');
  for (const e of [...registers.filter((e) => e.label !== 'benign'), ...publicBenign, ...registers.filter((e) => e.label === 'benign')])
    hash.update(`${e.file}\t${e.label}\t${e.text}\n`);
  // The evasive lines the gate reads (INTENT_EVASIVE_GATE), after the others, so the hash without them is unchanged.
  if (evasiveGate)
    for (const e of evasiveLines(evasiveGate).lines.filter((e) => evasiveGateSide(e) !== undefined)) hash.update(`${e.file}\t${e.label}\t${e.text}\n`);
  return { registers, publicBenign, sha256: hash.digest('hex') };
}

/** `cbrn=0.5,csam=0.3` as { cbrn: 0.5, csam: 0.3 }; undefined when unset or empty. */
export function parseClassThresholds(spec: string | undefined): Record<string, number> | undefined {
  if (!spec) return undefined;
  const out: Record<string, number> = {};
  for (const part of spec.split(',')) {
    const [c, t] = part.split('=');
    if (!c || !CLASSES.slice(1).includes(c) || !(Number(t) > 0 && Number(t) <= 1))
      throw new Error(`INTENT_CLASS_THRESHOLDS: "${part}" is not harm-class=threshold in (0, 1]`);
    out[c] = Number(t);
  }
  return out;
}

/**
 * The CSAM backstop of a candidate (`INTENT_CSAM_BACKSTOP=<head file in rules/>`, head.ts): that head's ask-head
 * weights, its configured threshold (its `evaluation.threshold`) and CSAM threshold, so the candidate refuses as CSAM
 * every reading that head refuses as CSAM. It must read the same input as the candidate (dimension, concepts, classes).
 * When that head keeps backstops of its own, they follow it (a list): it refused as CSAM what they refused too. With
 * `INTENT_CSAM_BACKSTOP_OWN=1` they do not: only that head's own ask head is kept (a candidate held to as many CSAM asks
 * as the configured model, not the same ones, may keep one older head's CSAM verdicts without the rest).
 */
function backstopOf(file: string, head: IntentHeadDoc): NonNullable<IntentHeadDoc['backstop']> {
  const own = narrowed(askHeadAsBackstop(file, head), process.env.INTENT_CSAM_BACKSTOP_AT);
  const kept = process.env.INTENT_CSAM_BACKSTOP_OWN ? [] : backstopsOf(JSON.parse(readFileSync(`${ROOT}rules/${file}`, 'utf8')) as IntentHeadDoc);
  return kept.length === 0 ? own : [own, ...kept];
}

/**
 * `INTENT_CSAM_BACKSTOP_AT=<p>` (the eighth round's candidates): the backstop refuses as CSAM only a reading whose CSAM
 * probability, by the head it keeps, reaches `p`, not every reading that head refused as CSAM. Its harm threshold is set
 * to 1, which 1 - p(benign) reaches only when the benign probability rounds to nothing: a head refuses a protective
 * prompt about children as CSAM mostly by a CSAM probability between its CSAM threshold and well under certainty (0.33
 * for the sixth round's), while the asks it keeps read higher; a narrower backstop keeps those and lets the others go.
 */
export function narrowed(b: BackstopDoc, at: string | undefined): BackstopDoc {
  if (at === undefined) return b;
  const p = Number(at);
  if (!(p > 0 && p <= 1) || p < b.csamThreshold) throw new Error(`INTENT_CSAM_BACKSTOP_AT: "${at}" is not a CSAM probability in [${b.csamThreshold}, 1]`);
  return { ...b, threshold: 1, csamThreshold: p };
}

function askHeadAsBackstop(file: string, head: IntentHeadDoc): BackstopDoc {
  const text = readFileSync(`${ROOT}rules/${file}`, 'utf8');
  const from = JSON.parse(text) as IntentHeadDoc & { evaluation?: { threshold?: number } };
  if (from.dim !== head.dim || from.conceptNames.join() !== head.conceptNames.join() || from.classes.join() !== head.classes.join())
    throw new Error(`INTENT_CSAM_BACKSTOP: ${file} reads another input or other classes than the head`);
  const threshold = from.evaluation?.threshold;
  const csamThreshold = from.classThresholds?.csam ?? threshold;
  if (!threshold || !csamThreshold) throw new Error(`INTENT_CSAM_BACKSTOP: ${file} records no threshold`);
  return {
    from: file,
    sha256: createHash('sha256').update(text).digest('hex'),
    mean: from.mean,
    scale: from.scale,
    ...(from.hidden ? { hidden: from.hidden } : {}),
    weights: from.weights,
    bias: from.bias,
    threshold,
    csamThreshold,
  };
}

/**
 * `INTENT_ASK_AVERAGE=<head file in rules/>:<weight>`: the trained ask head's class scores (logits) averaged with that
 * head's, the trained head weighing `weight` and the other the rest, written as one linear head over the trained
 * head's standardisation (both are linear in the embedding, so the average is one: exact but for the rounding of the
 * weights to 6 decimals). The other head's ask head is the one it was configured with, so what the average keeps of
 * it is its reading of the lines the new one was not trained on. Both must read the same input, and the other head must
 * be linear; a trained head with a hidden layer (`INTENT_HIDDEN`) keeps it, the linear head beside it (averageIntoHidden).
 * Returns what the head's evaluation records of it.
 */
function averageAskHead(head: IntentHeadDoc, spec: string): { from: string; sha256: string; weight: number } {
  const [file, w] = spec.split(':');
  const weight = Number(w);
  if (!file || !(weight > 0 && weight < 1)) throw new Error(`INTENT_ASK_AVERAGE: "${spec}" is not <head file>:<weight in (0, 1)>`);
  const text = readFileSync(`${ROOT}rules/${file}`, 'utf8');
  const o = JSON.parse(text) as IntentHeadDoc;
  if (o.hidden || o.dim !== head.dim || o.classes.join() !== head.classes.join() || o.mean.length !== head.mean.length)
    throw new Error(`INTENT_ASK_AVERAGE: ${file} is not a linear head over the same input and classes`);
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  if (head.hidden) {
    averageIntoHidden(head, o, weight);
    return { from: file, sha256: createHash('sha256').update(text).digest('hex'), weight };
  }
  // o's score of class c is sum_j o.W[c][j] (x_j - o.m_j) / o.s_j + o.b[c]: over this head's (x_j - m_j) / s_j its
  // weights are o.W[c][j] s_j / o.s_j, and its bias gains sum_j o.W[c][j] (m_j - o.m_j) / o.s_j.
  head.weights = head.weights.map((row, c) => row.map((v, j) => r6(weight * v + (1 - weight) * ((o.weights[c]![j]! * head.scale[j]!) / o.scale[j]!))));
  head.bias = head.bias.map((b, c) => {
    let shift = 0;
    for (let j = 0; j < head.mean.length; j++) shift += (o.weights[c]![j]! * (head.mean[j]! - o.mean[j]!)) / o.scale[j]!;
    return r6(weight * b + (1 - weight) * (o.bias[c]! + shift));
  });
  return { from: file, sha256: createHash('sha256').update(text).digest('hex'), weight };
}

/**
 * The average of a head with one hidden layer and a linear head `o` (averageAskHead), written as one head with a
 * hidden layer: o's score of class c over this head's standardised input u is a_c.u + b_c, and a_c.u is
 * max(0, a_c.u) - max(0, -a_c.u), two more rectified units per class whose output weights are 1 - weight and
 * -(1 - weight) into class c alone; the trained units' output weights are scaled by `weight`. Exact but for the
 * rounding of the weights to 6 decimals.
 */
function averageIntoHidden(head: IntentHeadDoc, o: IntentHeadDoc, weight: number): void {
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  const k = head.classes.length;
  const a = o.weights.map((row) => row.map((v, j) => (v * head.scale[j]!) / o.scale[j]!));
  const b = o.bias.map((b0, c) => {
    let shift = 0;
    for (let j = 0; j < head.mean.length; j++) shift += (o.weights[c]![j]! * (head.mean[j]! - o.mean[j]!)) / o.scale[j]!;
    return b0 + shift;
  });
  const units = a.flatMap((row) => [row.map(r6), row.map((v) => r6(-v))]);
  const hidden = head.hidden!;
  head.hidden = { weights: [...hidden.weights, ...units], bias: [...hidden.bias, ...units.map(() => 0)] };
  head.weights = head.weights.map((row, c) => [
    ...row.map((v) => r6(weight * v)),
    ...Array.from({ length: 2 * k }, (_, u) => (Math.floor(u / 2) !== c ? 0 : u % 2 === 0 ? r6(1 - weight) : r6(-(1 - weight)))),
  ]);
  head.bias = head.bias.map((v, c) => r6(weight * v + (1 - weight) * b[c]!));
}

/**
 * `INTENT_ASK_FROM=<head file in rules/>`: the ask head of a file written by this same command but for its thresholds
 * (INTENT_THRESHOLD, INTENT_CLASS_THRESHOLDS) and its backstop (INTENT_CSAM_BACKSTOP, INTENT_CSAM_BACKSTOP_AT), taken
 * as it is instead of trained again: training is deterministic, so the file written is byte for byte the one the
 * command writes without it, in seconds instead of minutes (the eighth round's candidates share one ask head). What the
 * file records of its training must be what this command would record (corpus, encoder, evasive lines, gate, hidden
 * layer, averaged head with its sha256, reading of the register lines), or it is refused; its harm weight is not
 * recorded, so the command must give the same INTENT_HARM_WEIGHT.
 */
function askHeadFrom(
  file: string,
  want: { corpusSha256: string; extraLinesSha256: string | undefined; gate: GateDoc | undefined },
): { head: IntentHeadDoc; averaged: { from: string; sha256: string; weight: number } | undefined } {
  const from = JSON.parse(readFileSync(`${ROOT}rules/${file}`, 'utf8')) as IntentHeadDoc;
  const ev = (from.evaluation ?? {}) as {
    averagedWith?: { from: string; sha256: string; weight: number };
    hidden?: unknown;
    regBen?: boolean;
    regAsk?: boolean;
  };
  const spec = process.env.INTENT_ASK_AVERAGE?.split(':');
  const averaged = spec
    ? {
        from: spec[0]!,
        sha256: createHash('sha256')
          .update(readFileSync(`${ROOT}rules/${spec[0]}`, 'utf8'))
          .digest('hex'),
        weight: Number(spec[1]),
      }
    : undefined;
  const hidden =
    TRAIN_PARAMS.hidden > 0
      ? { units: TRAIN_PARAMS.hidden, epochs: TRAIN_PARAMS.epochs, l2: TRAIN_PARAMS.l2, ...(HIDDEN_SEEDS > 1 ? { seeds: HIDDEN_SEEDS } : {}) }
      : undefined;
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const differs = [
    from.corpusSha256 !== want.corpusSha256 && 'corpus',
    from.encoderSha256 !== encoderFiles().sha256 && 'encoder',
    from.extraLinesSha256 !== want.extraLinesSha256 && 'evasive lines',
    !same(from.gate, want.gate) && 'gate',
    !same(ev.hidden, hidden) && 'hidden layer',
    !same(ev.averagedWith, averaged) && 'averaged head',
    ev.regBen !== !!process.env.INTENT_REGBEN && 'INTENT_REGBEN',
    ev.regAsk !== !!process.env.INTENT_REGASK && 'INTENT_REGASK',
  ].filter(Boolean);
  if (differs.length > 0) throw new Error(`INTENT_ASK_FROM: ${file} was written with another ${differs.join(', ')}`);
  // What the trainer sets after the ask head is set again here, in the same order, so the file is the same bytes.
  const head = structuredClone(from);
  for (const k of ['classThresholds', 'backstop', 'readings', 'gate', 'evaluation'] as const) delete head[k];
  return { head, averaged };
}

/**
 * One head from hidden-layer heads trained from several seeds (INTENT_HIDDEN_SEEDS), their class scores averaged: their
 * units side by side, each re-expressed over the first head's standardisation (a unit reads (x - m) / s; over the first
 * head's (x - m1) / s1 its weights are w s1 / s and its bias gains the sum of w (m1 - m) / s), their output weights
 * divided by their number, their biases averaged. Exact but for rounding to 6 decimals. One head is returned as it is.
 */
function mergeSeeds(heads: IntentHeadDoc[]): IntentHeadDoc {
  if (heads.length === 1) return heads[0]!;
  if (heads.some((h) => !h.hidden)) throw new Error('INTENT_HIDDEN_SEEDS needs INTENT_HIDDEN: only hidden-layer heads are merged');
  const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
  const [first] = heads as [IntentHeadDoc];
  const n = heads.length;
  const weights: number[][] = [];
  const bias: number[] = [];
  for (const h of heads)
    h.hidden!.weights.forEach((w, u) => {
      let b = h.hidden!.bias[u]!;
      for (let j = 0; j < w.length; j++) b += (w[j]! * (first.mean[j]! - h.mean[j]!)) / h.scale[j]!;
      weights.push(w.map((v, j) => r6((v * first.scale[j]!) / h.scale[j]!)));
      bias.push(r6(b));
    });
  return {
    ...first,
    hidden: { weights, bias },
    weights: first.weights.map((_, c) => heads.flatMap((h) => h.weights[c]!.map((v) => r6(v / n)))),
    bias: first.bias.map((_, c) => r6(heads.reduce((a, h) => a + h.bias[c]!, 0) / n)),
  };
}

/** The gate of a head file in rules/ (`INTENT_GATE_FROM`), which must have been trained on the gate lines of today. */
function gateOf(file: string, linesSha256: string, evasiveGate: boolean): GateDoc {
  const from = JSON.parse(readFileSync(`${ROOT}rules/${file}`, 'utf8')) as IntentHeadDoc;
  if (!from.gate || from.gate.linesSha256 !== linesSha256 || evasiveGate)
    throw new Error(`INTENT_GATE_FROM: ${file} holds no gate trained on today's gate lines (or INTENT_EVASIVE_GATE asks for another)`);
  return from.gate;
}

async function trainGate(): Promise<void> {
  const { examples: corpus, sha256 } = readCorpus();
  const concepts = readConcepts();
  const conceptMap = new ConceptMap(concepts);
  const { registers, publicBenign, sha256: linesSha256 } = gateLines();
  const regAsks = registers.filter((e) => e.label !== 'benign');
  // The ask head: the corpus as committed (plus the register asks with INTENT_REGASK); the register asks are
  // on-topic lines of the gate either way.
  // The evasive lines follow them (in file order): those of INTENT_EVASIVE trained on by the ask head (their benign
  // lines as benign), those of INTENT_EVASIVE_GATE read by the gate.
  const evasive = evasiveLines(process.env.INTENT_EVASIVE);
  const gateSpec = evasiveGateSpec();
  const evasiveGate = !!gateSpec;
  const headFiles = new Set(evasive.lines.map((e) => e.file));
  const gateFiles = new Set(evasiveLines(gateSpec).lines.map((e) => e.file));
  const evasiveAll = evasiveLines(evasiveGate || evasive.lines.length > 0 ? '1' : undefined).lines.filter(
    (e) => headFiles.has(e.file) || gateFiles.has(e.file),
  );
  const askLines = [...corpus, ...regAsks, ...evasiveAll];
  const nRegAsk = corpus.length + regAsks.length;
  const nCorpus = process.env.INTENT_REGASK ? nRegAsk : corpus.length;
  // INTENT_GATE_FROM=<head file in rules/>: that head's gate, weight for weight, instead of one trained here (it must
  // have been trained on these gate lines). The gate's off-topic lines are then not read at all: only the registers'
  // defensive lines, which the ask head reads as benign with INTENT_REGBEN.
  const gateFrom = process.env.INTENT_GATE_FROM ? gateOf(process.env.INTENT_GATE_FROM, linesSha256, evasiveGate) : undefined;
  const offLines = gateFrom
    ? registers.filter((e) => e.label === 'benign' && e.file.endsWith('-defensive.tsv') && !!process.env.INTENT_REGBEN)
    : [...publicBenign, ...registers.filter((e) => e.label === 'benign')];
  // INTENT_ASK_BENIGN: benign lines the ask head alone reads, last (askBenignLines); only beside a gate kept as it is.
  const extra = extraLines(process.env.INTENT_EVASIVE, process.env.INTENT_ASK_BENIGN);
  if (extra.askBenign.length > 0 && !gateFrom) throw new Error('INTENT_ASK_BENIGN needs INTENT_GATE_FROM: the gate does not read those lines');
  const all = [...askLines, ...offLines, ...extra.askBenign];
  const data = await headData(all, sha256, concepts);
  const nAsk = askLines.length;
  const nOff = nAsk + offLines.length;
  const regBen = !!process.env.INTENT_REGBEN;
  const isEvasive = (i: number) => i >= nRegAsk && i < nAsk;
  const useLine = (i: number) =>
    (i < nCorpus || (isEvasive(i) && headFiles.has(all[i]!.file)) || (regBen && all[i]!.file.endsWith('-defensive.tsv')) || i >= nOff) && !all[i]!.heldOut;
  // INTENT_ASK_FROM=<head file in rules/>: the ask head that file holds, written by this same command but for its
  // thresholds and backstop (askHeadFrom), instead of training it again.
  const askFrom = process.env.INTENT_ASK_FROM
    ? askHeadFrom(process.env.INTENT_ASK_FROM, {
        corpusSha256: sha256,
        extraLinesSha256: evasive.lines.length > 0 || extra.askBenign.length > 0 ? extra.sha256 : undefined,
        gate: gateFrom,
      })
    : undefined;
  // INTENT_HIDDEN_SEEDS=<n>: a hidden-layer ask head trained from n seeds, their class scores averaged (mergeSeeds).
  const head =
    askFrom?.head ?? mergeSeeds(Array.from({ length: HIDDEN_SEEDS }, (_, s) => fitHead(data, useLine, { ...TRAIN_PARAMS, seed: TRAIN_PARAMS.seed + s })));
  if (!askFrom && (evasive.lines.length > 0 || extra.askBenign.length > 0)) head.extraLinesSha256 = extra.sha256;
  const averaged = askFrom ? askFrom.averaged : process.env.INTENT_ASK_AVERAGE ? averageAskHead(head, process.env.INTENT_ASK_AVERAGE) : undefined;
  const classThresholds = parseClassThresholds(process.env.INTENT_CLASS_THRESHOLDS);
  if (classThresholds) head.classThresholds = classThresholds;
  const threshold = process.env.INTENT_THRESHOLD ? Number(process.env.INTENT_THRESHOLD) : HEAD_THRESHOLD;
  if (process.env.INTENT_CSAM_BACKSTOP) head.backstop = backstopOf(process.env.INTENT_CSAM_BACKSTOP, head);
  // INTENT_ASK_SENTENCES_FROM=<chars>: the runtime also reads a request that fits in one reading but holds at least
  // that many characters as its most ask-like sentences on their own (head.ts `readings`); the training lines are read
  // as before.
  if (process.env.INTENT_ASK_SENTENCES_FROM) head.readings = { askSentencesFrom: Number(process.env.INTENT_ASK_SENTENCES_FROM) };

  const gateTally = { onAsk: 0, onBenign: 0, offCorpus: 0, offOther: 0 };
  if (gateFrom) head.gate = gateFrom;
  else head.gate = trainGateOn();
  function trainGateOn(): GateDoc {
    const hasTerm = (e: Example) => conceptMap.read(wordsOf(e.text)).some((c) => GATE_TOPICS.includes(c));
    const benignReadings = new Set(
      all.flatMap((e, i) => (i < nAsk && !e.heldOut && e.label === 'benign' && (!isEvasive(i) || gateFiles.has(e.file)) ? data.readingSets[i]! : [])),
    );
    const rows: Array<{ x: Float64Array; y: number }> = [];
    const tally = gateTally;
    const seen = new Set<string>();
    all.forEach((e, i) => {
      if (e.heldOut) return;
      let y: number;
      let rs = data.readingSets[i]!;
      if (isEvasive(i)) {
        // The gate reads the evasive lines only with INTENT_EVASIVE_GATE, by file (evasiveGateSide).
        const side = gateFiles.has(e.file) ? evasiveGateSide(e) : undefined;
        if (side === undefined) return;
        y = side;
        if (y === 1 && e.label !== 'benign') {
          tally.onAsk++;
          const own = rs.filter((r) => !benignReadings.has(r));
          if (own.length > 0) rs = own;
        } else if (y === 1) tally.onBenign++;
        else tally.offOther++;
      } else if (e.label !== 'benign') {
        y = 1;
        tally.onAsk++;
        const own = rs.filter((r) => !benignReadings.has(r));
        if (own.length > 0) rs = own;
      } else if (i >= nAsk) {
        y = e.file.endsWith('-defensive.tsv') ? 1 : 0;
        if (y === 1) tally.onBenign++;
        else tally.offOther++;
      } else if (e.lang !== 'en' || hasTerm(e)) {
        y = 1;
        tally.onBenign++;
      } else {
        y = 0;
        tally.offCorpus++;
      }
      for (const r of rs) {
        const k = `${y}\t${r}`;
        if (seen.has(k)) continue;
        seen.add(k);
        rows.push({ x: data.rowOf.get(r)!, y });
      }
    });
    // GATE_PARAMS.seeds gates of different initial weights, their logits averaged: one wider hidden layer
    // (each member's output weights divided by their number), so the gate does not hang on one seed's luck.
    const members = Array.from({ length: GATE_PARAMS.seeds }, (_, m) =>
      trainMlpHead(rows, {
        classes: ['off', 'on'],
        conceptNames: data.conceptNames,
        concepts,
        encoderSha256: data.encoderSha256,
        corpusSha256: sha256,
        l2: GATE_PARAMS.l2,
        epochs: GATE_PARAMS.epochs,
        harmWeight: GATE_PARAMS.onWeight,
        hidden: GATE_PARAMS.hidden,
        seed: m + 1,
      }),
    );
    const n = members.length;
    const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
    const g = {
      mean: members[0]!.mean,
      scale: members[0]!.scale,
      hidden: { weights: members.flatMap((m) => m.hidden!.weights), bias: members.flatMap((m) => m.hidden!.bias) },
      weights: [0, 1].map((c) => members.flatMap((m) => m.weights[c]!.map((w) => r6(w / n)))),
      bias: [0, 1].map((c) => r6(members.reduce((a, m) => a + m.bias[c]!, 0) / n)),
    };
    return {
      mean: g.mean,
      scale: g.scale,
      hidden: g.hidden,
      weights: g.weights,
      bias: g.bias,
      thresholds: GATE_THRESHOLDS,
      topicConcepts: GATE_TOPICS,
      linesSha256,
    };
  }
  const verdicts = data.readingSets.map((_, i) => {
    const w = worstReading(data, head, i, threshold);
    return headVerdict(w.p, threshold, w.harm);
  });
  const heldOut = all.filter((e) => e.heldOut);
  head.evaluation = {
    threshold,
    classThresholds,
    regBen,
    regAsk: !!process.env.INTENT_REGASK,
    backstop: head.backstop
      ? Array.isArray(head.backstop)
        ? head.backstop.map((b) => ({ from: b.from, sha256: b.sha256 }))
        : { from: head.backstop.from, sha256: head.backstop.sha256 }
      : undefined,
    evasive: evasiveAll.length > 0 ? { askHead: [...headFiles], gate: [...gateFiles] } : undefined,
    averagedWith: averaged,
    hidden:
      TRAIN_PARAMS.hidden > 0
        ? { units: TRAIN_PARAMS.hidden, epochs: TRAIN_PARAMS.epochs, l2: TRAIN_PARAMS.l2, ...(HIDDEN_SEEDS > 1 ? { seeds: HIDDEN_SEEDS } : {}) }
        : undefined,
    readingChars: READING_CHARS,
    maxReadings: MAX_READINGS,
    note: 'ask head and topic gate on each corpus line, read as the gateway reads it; blocked = the gate passes and 1 - p(benign) >= threshold on the most harmful reading',
    gateRows: gateFrom ? { from: process.env.INTENT_GATE_FROM } : gateTally,
    train: breakdown(
      all.filter((e, i) => i < nCorpus && !e.heldOut),
      verdicts.filter((_, i) => i < nCorpus && !all[i]!.heldOut),
    ).all,
    registerAsks: breakdown(all.slice(nCorpus, nRegAsk), verdicts.slice(nCorpus, nRegAsk)).all,
    evasiveTrain: evasiveAll.length > 0 ? breakdown(all.slice(nRegAsk, nAsk), verdicts.slice(nRegAsk, nAsk)).all : undefined,
    offTopicTrain: gateFrom ? undefined : breakdown(offLines, verdicts.slice(nAsk, nOff)).all,
    askBenign:
      extra.askBenign.length > 0
        ? { files: process.env.INTENT_ASK_BENIGN!.split(','), train: breakdown(extra.askBenign, verdicts.slice(nOff)).all }
        : undefined,
    heldOut: breakdown(
      heldOut,
      verdicts.filter((_, i) => all[i]!.heldOut),
    ),
  };
  const out = `${ROOT}rules/${process.env.INTENT_HEAD_OUT ?? 'guardrails-intent-head-gate.json'}`;
  writeFileSync(out, JSON.stringify(head) + '\n');
  console.log(
    JSON.stringify({ out, corpusSha256: sha256, gate: { thresholds: GATE_THRESHOLDS, ...GATE_PARAMS, rows: gateTally }, evaluation: head.evaluation }, null, 1),
  );
}

async function main(): Promise<void> {
  if (process.env.INTENT_GATE) return trainGate();
  const { examples, sha256 } = readCorpus();
  if (process.argv.includes('--check')) {
    for (const out of [OUT, HEAD_OUT]) {
      const committed = JSON.parse(readFileSync(out, 'utf8')) as { corpusSha256: string };
      if (committed.corpusSha256 !== sha256) {
        console.error(`${out} was trained on corpus ${committed.corpusSha256}, the corpus is now ${sha256}: run npx tsx scripts/train-guard-intent.ts`);
        process.exit(1);
      }
    }
    // The gated candidate, when present: its ask head on this corpus, its gate on these lines.
    const gated = `${ROOT}rules/guardrails-intent-head-gate.json`;
    if (existsSync(gated)) {
      const doc = JSON.parse(readFileSync(gated, 'utf8')) as IntentHeadDoc;
      const lines = gateLines().sha256;
      if (doc.corpusSha256 !== sha256 || doc.gate?.linesSha256 !== lines) {
        console.error(
          `${gated} was trained on corpus ${doc.corpusSha256} and gate lines ${doc.gate?.linesSha256}, they are now ${sha256} and ${lines}: run INTENT_GATE=1 npx tsx scripts/train-guard-intent.ts`,
        );
        process.exit(1);
      }
    }
    console.log('intent models match the corpus');
    return;
  }
  const trainSet = examples.filter((e) => !e.heldOut);
  const heldOut = examples.filter((e) => e.heldOut);
  const concepts = readConcepts();
  // The word scorer is trained without the non-English lines of train-framings.tsv: it reads English words
  // and concepts, and those lines (translation requests quoting English asks, conversations whose earlier
  // turns are about the topic) taught it that English history and incident-plan prompts about CBRN lean
  // harmful (it then refused 3 held-out benign prompts instead of 2, and two defensive checks of
  // test/guard/intent-corpus.unit.test.ts).
  // Nor on the files written for the model alone (MODEL_ONLY): trained on the candidate files, it refused 4
  // held-out benign prompts instead of 2 (terse tickets about card testing and OTP codes read like asks).
  // Nor on the external authors' lines (EXTERNAL_TRAINED), most of them not in English, nor on the public
  // everyday requests (PUBLIC_BENIGN_TRAINED): the first pass reads only text that names a harm topic.
  const { __bias, ...weights } = train(
    trainSet.filter((e) => (e.file !== 'train-framings.tsv' || e.lang === 'en') && !MODEL_ONLY.includes(e.file) && !isExternal(e) && !isPublicBenign(e)),
    concepts,
  ) as Record<string, number[]> & { __bias: number[] };
  const doc: IntentModelDoc = { features: FEATURE_SET, corpusSha256: sha256, concepts, classes: CLASSES, bias: __bias, weights };
  const scorer = new IntentScorer(doc);
  const threshold = 0.5;
  doc.evaluation = {
    threshold,
    note: 'word-feature first pass alone, any harm class vs benign',
    train: evaluate(scorer, trainSet, threshold),
    heldOut: evaluate(scorer, heldOut, threshold),
  };
  writeFileSync(OUT, JSON.stringify(doc, null, 0) + '\n');

  // The head over the encoder's embeddings (fitHead), trained on what the gateway reads (readings.ts).
  const data = await headData(examples, sha256, concepts);
  const { readingSets } = data;
  const head = fitHead(data, (i) => !examples[i]!.heldOut, TRAIN_PARAMS);
  // Verdicts as the gateway gives them: the most harmful reading decides. Held-out lines are read as the
  // test reads them (one user message).
  const verdicts = readingSets.map((_, i) => {
    const w = worstReading(data, head, i);
    return headVerdict(w.p, HEAD_THRESHOLD, w.harm);
  });
  head.evaluation = {
    threshold: HEAD_THRESHOLD,
    readingChars: READING_CHARS,
    maxReadings: MAX_READINGS,
    note: 'model alone on each corpus line, read as the gateway reads it (readings.ts); blocked = 1 - p(benign) >= threshold on the most harmful reading',
    train: breakdown(
      trainSet,
      verdicts.filter((_, i) => !examples[i]!.heldOut),
    ).all,
    heldOut: breakdown(
      heldOut,
      verdicts.filter((_, i) => examples[i]!.heldOut),
    ),
  };
  writeFileSync(HEAD_OUT, JSON.stringify(head) + '\n');
  console.log(JSON.stringify({ corpusSha256: sha256, firstPass: doc.evaluation, head: head.evaluation }, null, 1));
  for (const [i, e] of examples.entries()) {
    if (!e.heldOut) continue;
    const v = verdicts[i]!;
    if ((e.label === 'benign') !== (v === 'benign')) console.error(`held-out miss (${e.label} -> ${v}, ${e.lang}, ${e.framing}): ${e.text.slice(0, 140)}`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
