/**
 * Cross-validation of the intent model's head on its own corpus, to choose the head's form, regularisation,
 * class weight and threshold without looking at any set written to test it. The training lines are cut into
 * groups of consecutive lines of one file (lines written together share a template and a voice, so a group
 * is never split between training and evaluation), the groups dealt into five folds by a hash of their name;
 * each fold is scored by a head trained on the other four, as scripts/train-guard-intent.ts trains it. The
 * lines of an external author (test/fixtures/guard/intent-external/, trained on or named in CV_AUTHORS) are
 * one fold per author: scored by a head trained on every other line, the team's and the other authors', so
 * their figure is that of an author the head never read. The held-out file (heldout.tsv) is scored by a head
 * trained on every training line, as committed.
 *
 *   npx tsx scripts/intent-cv.ts                                    # the committed parameters
 *   npx tsx scripts/intent-cv.ts '{"hidden":32,"l2":0.001,"epochs":40}' ...  # others, one JSON each
 *
 * Prints, per parameter set and threshold, recall and false-positive rate of "harmful" (any class but
 * benign) pooled over the folds of the team's lines, per external author, and on the held-out file.
 * Embeddings come from the cache of intent-head.ts.
 * Optional, by environment: CV_AUTHORS=<.tsv>[,<.tsv>...] external authors' files trained on as if listed in
 * EXTERNAL_TRAINED (one fold each), CV_TRAIN=<.tsv>[,...] more team lines trained on (grouped folds, as the
 * corpus: test/fixtures/guard/intent-candidates/), CV_BASE=<file of texts>[,<file>...] also prints the folds restricted to the
 * lines of each file (to compare corpora that share them, or to see one kind of line), CV_WITHOUT=<corpus
 * file> the folds without that file's lines, CV_MISSES=<threshold> the fold lines wrongly decided at that
 * threshold, CV_LANGS=<threshold> per language, CV_EXTRA=<.tsv>[,<.tsv>...] the lines of candidate files that
 * the corpus does not hold, scored by the head trained on every training line (how a head not trained on them
 * decides them: test/fixtures/guard/intent-candidates/, or an external author's file), CV_DEV=<.tsv> the
 * development set (never trained on, the set heads are chosen on with the folds:
 * test/fixtures/guard/intent-dev/dev.tsv), DEV_MISSES=<threshold> its lines wrongly decided at that
 * threshold, CV_CLASS_T=<threshold> per-class thresholds (one for the lines whose most probable harm class is
 * cbrn, csam, fraud) chosen on the folds to catch the most asks without more false positives than that one
 * threshold, and on the development set the same way, each printed with its figures on the other.
 * CV_CHOOSE=<.tsv> the choice set (written by an author outside the team, never trained on, used only to
 * choose a head: test/fixtures/guard/intent-choice/choice.tsv), scored by the head trained on every training
 * line, per threshold and per class; CV_JSON=<file> appends one JSON line per parameter set with every
 * figure above per threshold (scripts/intent-choose.ts reads them to apply a rule set down beforehand), and
 * CV_HEADS=<dir> writes there the head trained on every training line of each parameter set (named in the
 * JSON line), so a set written later is scored by the same heads without training them again. CV_NO_FOLDS=1
 * skips the team's folds (every other figure stays).
 */
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import {
  CLASSES,
  HEAD_PARAMS,
  fitHead,
  headData,
  isExternal,
  readConcepts,
  readCorpus,
  readTsv,
  worstReading,
  type Example,
  type HeadParams,
} from './train-guard-intent.js';

const FOLDS = 5;
const GROUP = 6;
const THRESHOLDS = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9];

const list = (v: string | undefined) => (v ? v.split(',').filter((f) => f !== '') : []);
const corpus = readCorpus();
// Lines the corpus already holds are not read again from a file named below.
const known = new Set(corpus.examples.map((e) => e.text));
const fresh = (es: Example[]) => es.filter((e) => !known.has(e.text));
// External authors' files (CV_AUTHORS) and more team lines (CV_TRAIN), trained on in the folds.
const authors = list(process.env.CV_AUTHORS).flatMap((f) => fresh(readTsv(f, `external/${basename(f)}`)));
const train = list(process.env.CV_TRAIN).flatMap((f) => fresh(readTsv(f, basename(f))));
// Lines of candidate files (CV_EXTRA) that the corpus does not hold: never trained on here, scored by the
// head trained on every training line, as the held-out file is; reported per file.
const extraFiles = list(process.env.CV_EXTRA);
const extra = extraFiles.flatMap((f) => fresh(readTsv(f, `extra:${f}`)));
// Lines of the development set (CV_DEV, test/fixtures/guard/intent-dev/dev.tsv): never trained on, scored
// by the head trained on every training line, and reported on their own (the set heads are chosen on).
const dev = process.env.CV_DEV ? readTsv(process.env.CV_DEV, 'dev') : [];
// Lines of the choice set (CV_CHOOSE): never trained on, scored like the development set, reported per class.
const choose = process.env.CV_CHOOSE ? readTsv(process.env.CV_CHOOSE, 'choose') : [];
const trainedTexts = new Set([...corpus.examples.filter((e) => !e.heldOut), ...authors, ...train].map((e) => e.text));
const overlap = choose.filter((e) => trainedTexts.has(e.text)).length;
if (overlap > 0) console.log(`note: ${overlap} lines of the choice set are also training lines`);
const examples = [...corpus.examples, ...authors, ...train, ...extra, ...dev, ...choose];
const data = await headData(examples, corpus.sha256, readConcepts());
const within = new Map<string, number>();
// Fold of each line: 0..FOLDS-1 for the team's lines (grouped), FOLDS + n for the n-th external author;
// negative for lines never trained on (-1 held-out file, -2 CV_EXTRA, -3 development set, -4 choice set).
const authorFiles = [...new Set(examples.filter(isExternal).map((e) => e.file))];
const fold = examples.map((e) => {
  if (e.file.startsWith('extra:')) return -2;
  if (e.file === 'dev') return -3;
  if (e.file === 'choose') return -4;
  if (e.heldOut) return -1;
  if (isExternal(e)) return FOLDS + authorFiles.indexOf(e.file);
  const n = within.get(e.file) ?? 0;
  within.set(e.file, n + 1);
  return (
    createHash('sha256')
      .update(`${e.file}:${Math.floor(n / GROUP)}`)
      .digest()[0]! % FOLDS
  );
});
const foldIds = [...new Set(fold.filter((f) => f >= 0))].sort((a, b) => a - b);

interface Rates {
  recall: number;
  fpr: number;
  fp: number;
  benign: number;
  tp: number;
  harmful: number;
}
/** A threshold, or one per harm class (of the most probable harm class of the line's most harmful reading). */
type Threshold = number | Record<string, number>;
const klass = new Map<number, string>();
const hits = (i: number, harm: Map<number, number>, t: Threshold) => harm.get(i)! >= (typeof t === 'number' ? t : t[klass.get(i)!]!);
function rates(idx: number[], harm: Map<number, number>, t: Threshold): Rates {
  let tp = 0,
    fp = 0,
    benign = 0,
    harmful = 0;
  for (const i of idx) {
    const hit = hits(i, harm, t);
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

const regressions = new Map<string, ReturnType<typeof fitHead>>();
const sets = process.argv.slice(2).map((a) => ({ ...HEAD_PARAMS, ...(JSON.parse(a) as Partial<HeadParams>) }));
if (sets.length === 0) sets.push(HEAD_PARAMS);
for (const p of sets) {
  const started = Date.now();
  const harm = new Map<number, number>();
  const score = (i: number, head: ReturnType<typeof fitHead>) => {
    const w = worstReading(data, head, i);
    let best = 1;
    for (let c = 2; c < CLASSES.length; c++) if (w.p[c]! > w.p[best]!) best = c;
    harm.set(i, w.harm);
    klass.set(i, CLASSES[best]!);
  };
  // The regressions already trained (the same lines and parameters, neighbours aside), by fold.
  const fit = (f: number | 'all', use: (i: number) => boolean) => {
    const key = JSON.stringify([f, { ...p, mix: 1, k: 0, tau: 0 }]);
    let regression = regressions.get(key);
    if (!regression) regressions.set(key, (regression = fitHead(data, use, { ...p, mix: 1 })));
    return p.mix < 1 ? fitHead(data, use, p, regression) : regression;
  };
  // CV_NO_FOLDS=1: the external authors' folds only (the team's folds are the slowest part, and a choice made on
  // the choice set, the authors and the development set does not read them).
  for (const f of foldIds) {
    if (process.env.CV_NO_FOLDS && f < FOLDS) continue;
    const use = (i: number) => fold[i]! >= 0 && fold[i] !== f;
    const head = fit(f, use);
    fold.forEach((g, i) => g === f && score(i, head));
  }
  const full = fit('all', (i) => fold[i]! >= 0);
  fold.forEach((g, i) => g < 0 && score(i, full));
  // The folds of the team's lines (grouped); each external author's lines, scored by heads that never read them.
  const cvIdx = process.env.CV_NO_FOLDS ? [] : fold.flatMap((g, i) => (g >= 0 && g < FOLDS ? [i] : []));
  const baseIdx = cvIdx.filter((i) => corpus.examples.includes(examples[i]!));
  const hoIdx = fold.flatMap((g, i) => (g === -1 ? [i] : []));
  const exIdx = fold.flatMap((g, i) => (g === -2 ? [i] : []));
  const devIdx = fold.flatMap((g, i) => (g === -3 ? [i] : []));
  const chooseIdx = fold.flatMap((g, i) => (g === -4 ? [i] : []));
  console.log(`\n${JSON.stringify(p)}  (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  const counts = (idx: number[], t: Threshold) => {
    const r = rates(idx, harm, t);
    return `${r.tp}/${r.harmful} fp ${r.fp}/${r.benign}`;
  };
  console.log('threshold   cv recall  cv fp%  (fp/benign)   held-out recall  fp%  (fp/benign)   mean recall  mean fp%');
  for (const t of THRESHOLDS) {
    const cv = rates(cvIdx, harm, t);
    const ho = rates(hoIdx, harm, t);
    console.log(
      `${t.toFixed(2).padStart(9)}   ${pct(cv.recall)}    ${pct(cv.fpr)}  (${cv.fp}/${cv.benign})      ${pct(ho.recall)}    ${pct(ho.fpr)}  (${ho.fp}/${ho.benign})    ${pct((cv.recall + ho.recall) / 2)}  ${pct((cv.fpr + ho.fpr) / 2)}`,
    );
  }
  if (baseIdx.length < cvIdx.length)
    console.log(THRESHOLDS.map((t) => `${t}: ${counts(baseIdx, t)}`).join(' | '), `(folds, the ${baseIdx.length} lines of the committed corpus)`);
  for (const [n, file] of authorFiles.entries()) {
    const idx = fold.flatMap((g, i) => (g === FOLDS + n ? [i] : []));
    console.log(THRESHOLDS.map((t) => `${t}: ${counts(idx, t)}`).join(' | '), `(${file}, ${idx.length} lines, its own fold)`);
  }
  for (const f of extraFiles) {
    const idx = exIdx.filter((i) => examples[i]!.file === `extra:${f}`);
    console.log(THRESHOLDS.map((t) => `${t}: ${counts(idx, t)}`).join(' | '), `(${idx.length} lines of ${f}, not trained on)`);
  }
  if (devIdx.length > 0) {
    console.log(THRESHOLDS.map((t) => `${t}: ${counts(devIdx, t)}`).join(' | '), `(dev set, ${devIdx.length} lines, not trained on)`);
    if (process.env.DEV_MISSES) {
      const t = Number(process.env.DEV_MISSES);
      for (const i of devIdx) {
        const e = examples[i]!;
        if ((e.label === 'benign') === harm.get(i)! >= t)
          console.log(`  dev miss ${e.label} ${e.lang} ${e.framing} ${harm.get(i)!.toFixed(2)}: ${e.text.slice(0, 150).replaceAll('\n', ' / ')}`);
      }
    }
  }
  if (chooseIdx.length > 0) {
    console.log(`choice set, ${chooseIdx.length} lines, not trained on (asks caught per class; benign refused):`);
    for (const t of THRESHOLDS) {
      const perClass = CLASSES.slice(1).map((c) => {
        const r = rates(
          chooseIdx.filter((i) => examples[i]!.label === c),
          harm,
          t,
        );
        return `${c} ${r.tp}/${r.harmful}`;
      });
      const r = rates(chooseIdx, harm, t);
      console.log(`${t.toFixed(2).padStart(9)}   ${counts(chooseIdx, t)}  (recall ${pct(r.recall)} %, fp ${pct(r.fpr)} %)  ${perClass.join('  ')}`);
    }
  }
  if (process.env.CV_JSON) {
    // Every figure per threshold, for scripts/intent-choose.ts.
    const fig = (idx: number[]) =>
      Object.fromEntries(
        THRESHOLDS.map((t) => {
          const r = rates(idx, harm, t);
          return [t, { tp: r.tp, harmful: r.harmful, fp: r.fp, benign: r.benign }];
        }),
      );
    let head = '';
    if (process.env.CV_HEADS) {
      mkdirSync(process.env.CV_HEADS, { recursive: true });
      const key = createHash('sha256')
        .update(JSON.stringify([p, process.env.CV_AUTHORS ?? '', process.env.CV_TRAIN ?? '']))
        .digest('hex');
      head = `${process.env.CV_HEADS}/${key.slice(0, 16)}.json`;
      writeFileSync(head, JSON.stringify(full));
    }
    const record = {
      params: p,
      head,
      env: Object.fromEntries(['CV_AUTHORS', 'CV_TRAIN', 'CV_DEV', 'CV_CHOOSE'].map((k) => [k, process.env[k] ?? ''])),
      folds: fig(cvIdx),
      baseFolds: fig(baseIdx),
      heldOut: fig(hoIdx),
      authors: Object.fromEntries(authorFiles.map((file, n) => [file, fig(fold.flatMap((g, i) => (g === FOLDS + n ? [i] : [])))])),
      extra: Object.fromEntries(extraFiles.map((f) => [f, fig(exIdx.filter((i) => examples[i]!.file === `extra:${f}`))])),
      dev: fig(devIdx),
      choose: fig(chooseIdx),
      chooseClass: Object.fromEntries(CLASSES.slice(1).map((c) => [c, fig(chooseIdx.filter((i) => examples[i]!.label === c))])),
    };
    appendFileSync(process.env.CV_JSON, JSON.stringify(record) + '\n');
  }
  // Per-class thresholds (CV_CLASS_T=<t>): on one set, the triple that catches the most asks with no more false
  // positives than the single threshold t (ties: fewer false positives, then the triple nearest t); printed
  // with its figures on the other sets, so a choice made on the folds is checked on the development set and
  // the other way round.
  if (process.env.CV_CLASS_T) {
    const t0 = Number(process.env.CV_CLASS_T);
    const authorIdx = fold.flatMap((g, i) => (g >= FOLDS ? [i] : []));
    const on: Array<[string, number[]]> = [
      ['folds', cvIdx],
      ['authors', authorIdx],
      ['folds+authors', authorIdx.length > 0 ? [...cvIdx, ...authorIdx] : []],
      ['dev', devIdx],
    ];
    for (const [name, idx] of on) {
      if (idx.length === 0) continue;
      const base = rates(idx, harm, t0);
      let best: { t: Record<string, number>; r: Rates; d: number } | null = null;
      for (const cbrn of THRESHOLDS)
        for (const csam of THRESHOLDS)
          for (const fraud of THRESHOLDS) {
            const t = { cbrn, csam, fraud };
            const r = rates(idx, harm, t);
            const d = Math.abs(cbrn - t0) + Math.abs(csam - t0) + Math.abs(fraud - t0);
            if (r.fp > base.fp) continue;
            if (!best || r.tp > best.r.tp || (r.tp === best.r.tp && (r.fp < best.r.fp || (r.fp === best.r.fp && d < best.d)))) best = { t, r, d };
          }
      console.log(
        `per-class thresholds chosen on ${name}: ${JSON.stringify(best!.t)};`,
        on
          .filter(([, x]) => x.length > 0)
          .map(([n, x]) => `${n} ${counts(x, best!.t)} (single ${t0}: ${counts(x, t0)})`)
          .join(' | '),
      );
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
