/**
 * Cross-validation of the intent model's head on its own corpus, to choose the head's form, regularisation,
 * class weight and threshold without looking at any set written to test it. The training lines are cut into
 * groups of consecutive lines of one file (lines written together share a template and a voice, so a group
 * is never split between training and evaluation), the groups dealt into five folds by a hash of their name;
 * each fold is scored by a head trained on the other four, as scripts/train-guard-intent.ts trains it. The
 * held-out file (heldout.tsv) is scored by a head trained on every training line, as committed.
 *
 *   npx tsx scripts/intent-cv.ts                                    # the committed parameters
 *   npx tsx scripts/intent-cv.ts '{"hidden":32,"l2":0.001,"epochs":40}' ...  # others, one JSON each
 *
 * Prints, per parameter set and threshold, recall and false-positive rate of "harmful" (any class but
 * benign) pooled over the folds, and on the held-out file. Embeddings come from the cache of intent-head.ts.
 * Optional, by environment: CV_BASE=<file of texts>[,<file>...] also prints the folds restricted to the
 * lines of each file (to compare corpora that share them, or to see one kind of line), CV_WITHOUT=<corpus
 * file> the folds without that file's lines, CV_MISSES=<threshold> the fold lines wrongly decided at that
 * threshold, CV_LANGS=<threshold> per language, CV_EXTRA=<.tsv> the lines of a candidate file that the corpus
 * does not hold, scored by the head trained on every training line (how a head not trained on them decides
 * them: test/fixtures/guard/intent-candidates/), CV_DEV=<.tsv> the development set (never trained on, the set heads
 * are chosen on with the folds: test/fixtures/guard/intent-dev/dev.tsv), DEV_MISSES=<threshold> its lines
 * wrongly decided at that threshold.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { HEAD_PARAMS, fitHead, headData, readConcepts, readCorpus, worstReading, type Example, type HeadParams } from './train-guard-intent.js';

const FOLDS = 5;
const GROUP = 6;
const THRESHOLDS = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9];

const corpus = readCorpus();
// Lines of a candidate file (CV_EXTRA, the corpus's .tsv columns) that the corpus does not hold: never trained
// on here, scored by the head trained on every training line, as the held-out file is.
const known = new Set(corpus.examples.map((e) => e.text));
const extra: Example[] = (process.env.CV_EXTRA ? readFileSync(process.env.CV_EXTRA, 'utf8').split('\n') : [])
  .filter((l) => l.trim() !== '' && !l.startsWith('#'))
  .map((l) => {
    const [label, lang, framing, text] = l.split('\t') as [string, string, string, string];
    return { label, lang, framing, text: text.trim().replaceAll('\\n', '\n'), heldOut: false, file: 'extra' };
  })
  .filter((e) => !known.has(e.text));
// Lines of the development set (CV_DEV, test/fixtures/guard/intent-dev/dev.tsv): never trained on, scored
// by the head trained on every training line, and reported on their own (the set heads are chosen on).
const readTsv = (file: string, tag: string): Example[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'))
    .map((l) => {
      const [label, lang, framing, text] = l.split('\t') as [string, string, string, string];
      return { label, lang, framing, text: text.trim().replaceAll('\\n', '\n'), heldOut: false, file: tag };
    });
const dev = process.env.CV_DEV ? readTsv(process.env.CV_DEV, 'dev') : [];
const examples = [...corpus.examples, ...extra, ...dev];
const data = await headData(examples, corpus.sha256, readConcepts());
const within = new Map<string, number>();
const fold = examples.map((e) => {
  if (e.file === 'extra') return -2;
  if (e.file === 'dev') return -3;
  if (e.heldOut) return -1;
  const n = within.get(e.file) ?? 0;
  within.set(e.file, n + 1);
  return (
    createHash('sha256')
      .update(`${e.file}:${Math.floor(n / GROUP)}`)
      .digest()[0]! % FOLDS
  );
});

interface Rates {
  recall: number;
  fpr: number;
  fp: number;
  benign: number;
  tp: number;
  harmful: number;
}
function rates(idx: number[], harm: Map<number, number>, t: number): Rates {
  let tp = 0,
    fp = 0,
    benign = 0,
    harmful = 0;
  for (const i of idx) {
    const hit = harm.get(i)! >= t;
    if (examples[i]!.label === 'benign') {
      benign++;
      if (hit) fp++;
    } else {
      harmful++;
      if (hit) tp++;
    }
  }
  return { recall: tp / harmful, fpr: fp / benign, fp, benign, tp, harmful };
}
const pct = (x: number) => (100 * x).toFixed(1).padStart(5);

const sets = process.argv.slice(2).map((a) => ({ ...HEAD_PARAMS, ...(JSON.parse(a) as Partial<HeadParams>) }));
if (sets.length === 0) sets.push(HEAD_PARAMS);
for (const p of sets) {
  const started = Date.now();
  const harm = new Map<number, number>();
  for (let f = 0; f < FOLDS; f++) {
    const use = (i: number) => fold[i]! >= 0 && fold[i] !== f;
    const head = fitHead(data, use, p);
    fold.forEach((g, i) => g === f && harm.set(i, worstReading(data, head, i).harm));
  }
  const full = fitHead(data, (i) => fold[i]! >= 0, p);
  fold.forEach((g, i) => g < 0 && harm.set(i, worstReading(data, full, i).harm));
  const cvIdx = fold.flatMap((g, i) => (g >= 0 ? [i] : []));
  const hoIdx = fold.flatMap((g, i) => (g === -1 ? [i] : []));
  const exIdx = fold.flatMap((g, i) => (g === -2 ? [i] : []));
  const devIdx = fold.flatMap((g, i) => (g === -3 ? [i] : []));
  console.log(`\n${JSON.stringify(p)}  (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  console.log('threshold   cv recall  cv fp%  (fp/benign)   held-out recall  fp%  (fp/benign)   mean recall  mean fp%');
  for (const t of THRESHOLDS) {
    const cv = rates(cvIdx, harm, t);
    const ho = rates(hoIdx, harm, t);
    console.log(
      `${t.toFixed(2).padStart(9)}   ${pct(cv.recall)}    ${pct(cv.fpr)}  (${cv.fp}/${cv.benign})      ${pct(ho.recall)}    ${pct(ho.fpr)}  (${ho.fp}/${ho.benign})    ${pct((cv.recall + ho.recall) / 2)}  ${pct((cv.fpr + ho.fpr) / 2)}`,
    );
  }
  if (exIdx.length > 0)
    console.log(
      THRESHOLDS.map((t) => {
        const r = rates(exIdx, harm, t);
        return `${t}: ${r.tp}/${r.harmful} fp ${r.fp}/${r.benign}`;
      }).join(' | '),
      `(${exIdx.length} lines of ${process.env.CV_EXTRA}, not trained on)`,
    );
  if (devIdx.length > 0) {
    console.log(
      THRESHOLDS.map((t) => {
        const r = rates(devIdx, harm, t);
        return `${t}: ${r.tp}/${r.harmful} fp ${r.fp}/${r.benign}`;
      }).join(' | '),
      `(dev set, ${devIdx.length} lines, not trained on)`,
    );
    if (process.env.DEV_MISSES) {
      const t = Number(process.env.DEV_MISSES);
      for (const i of devIdx) {
        const e = examples[i]!;
        if ((e.label === 'benign') === harm.get(i)! >= t)
          console.log(`  dev miss ${e.label} ${e.lang} ${e.framing} ${harm.get(i)!.toFixed(2)}: ${e.text.slice(0, 150).replaceAll('\n', ' / ')}`);
      }
    }
  }
  // The folds without the lines of one file (CV_WITHOUT): figures comparable with a run before that file existed.
  if (process.env.CV_WITHOUT) {
    const idx = cvIdx.filter((i) => examples[i]!.file !== process.env.CV_WITHOUT);
    console.log(
      THRESHOLDS.map((t) => {
        const r = rates(idx, harm, t);
        return `${t}: ${pct(r.recall)} / ${pct(r.fpr)}`;
      }).join(' | '),
      `(folds without ${process.env.CV_WITHOUT})`,
    );
  }
  // The folds restricted to the lines listed in each CV_BASE file (texts, one a line, `\n` for line breaks):
  // figures comparable between corpora that share those lines.
  for (const file of process.env.CV_BASE?.split(',') ?? []) {
    const base = new Set(readFileSync(file, 'utf8').split('\n'));
    const idx = cvIdx.filter((i) => base.has(examples[i]!.text.replaceAll('\n', '\\n')));
    console.log(
      THRESHOLDS.map((t) => {
        const r = rates(idx, harm, t);
        return `${t}: ${pct(r.recall)} / ${pct(r.fpr)}`;
      }).join(' | '),
      `(folds, ${idx.length} lines of ${file})`,
    );
  }
  // The lines the folds get wrong at threshold CV_MISSES, to see what the corpus lacks.
  if (process.env.CV_MISSES) {
    const t = Number(process.env.CV_MISSES);
    for (const i of cvIdx) {
      const e = examples[i]!;
      if ((e.label === 'benign') === harm.get(i)! >= t)
        console.log(`  miss ${e.label} ${e.lang} ${e.framing} ${harm.get(i)!.toFixed(2)}: ${e.text.slice(0, 150).replaceAll('\n', ' / ')}`);
    }
  }
  // Per language on the folds at the committed threshold: where the head is weakest.
  if (process.env.CV_LANGS) {
    const t = Number(process.env.CV_LANGS);
    const langs = [...new Set(cvIdx.map((i) => examples[i]!.lang))].sort();
    console.log(
      langs
        .map((l) => {
          const r = rates(
            cvIdx.filter((i) => examples[i]!.lang === l),
            harm,
            t,
          );
          return `${l} ${r.tp}/${r.harmful} fp ${r.fp}/${r.benign}`;
        })
        .join(' | '),
    );
  }
}
