/**
 * Chooses the intent model's head on the choice set (test/fixtures/guard/intent-choice/choice.tsv: written
 * by an author outside the team, never trained on, used only to choose), by a rule fixed in this file before
 * the set was read. The settings were trained beforehand by scripts/intent-cv.ts with CV_JSON (their figures
 * on the team's folds, each external author's fold, the development set and the held-out file, per
 * threshold) and CV_HEADS (the head trained on every training line of each setting); this script scores the
 * choice set with each of those heads and with the committed head, then applies the rule.
 *
 *   npx tsx scripts/intent-choose.ts <cv.jsonl> <choice.tsv>
 *
 * The rule (docs/guardrails.md, "A choice set by a third author"), with "the committed head" the committed
 * head at its threshold (HEAD_THRESHOLD) and a candidate one setting at one threshold:
 *   1. Eligible: on the choice set, no more benign lines refused than the committed head, at least as many
 *      asks caught, and at least as many of its CSAM asks; on the development set, at least as many asks
 *      caught and at most one more benign line refused; on each external author's lines (the author's own
 *      fold when the setting trains on them, not trained on otherwise), at least as many asks caught and no
 *      more benign lines refused.
 *   2. Among the eligible: the most choice-set asks caught; then the fewest choice-set benign refusals; then
 *      the most authors' asks caught; the fewest authors' benign refusals; the most development-set asks;
 *      the higher threshold.
 *   3. The chosen candidate goes to the independent sets (once) only if it differs from the committed head
 *      on the choice set (more asks caught or fewer benign refused); otherwise the committed head stays.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { IntentHeadDoc } from '../src/guard/model/head.js';
import { HEAD_PARAMS, HEAD_THRESHOLD, headData, readConcepts, readTsv, worstReading, type HeadParams } from './train-guard-intent.js';

interface Fig {
  tp: number;
  harmful: number;
  fp: number;
  benign: number;
}
type PerT = Record<string, Fig>;
interface CvRecord {
  params: HeadParams;
  head: string;
  env: Record<string, string>;
  folds: PerT;
  dev: PerT;
  heldOut: PerT;
  authors: Record<string, PerT>;
  extra: Record<string, PerT>;
}
interface Candidate {
  name: string;
  t: number;
  choice: Fig;
  csam: Fig;
  dev: Fig;
  authors: Record<string, Fig>;
  folds: Fig;
  heldOut: Fig;
}

const [cvFile, choiceFile] = process.argv.slice(2);
if (!cvFile || !choiceFile) throw new Error('usage: intent-choose.ts <cv.jsonl> <choice.tsv>');
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const records = readFileSync(cvFile, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as CvRecord);
const choice = readTsv(choiceFile, 'choose');
const data = await headData(choice, '', readConcepts());
const THRESHOLDS = Object.keys(records[0]!.folds).map(Number);

/** The choice set's figures for one head at each threshold: all lines, and the CSAM asks alone. */
function scoreChoice(doc: IntentHeadDoc): Map<number, { all: Fig; csam: Fig }> {
  const harm = choice.map((_, i) => worstReading(data, doc, i).harm);
  const out = new Map<number, { all: Fig; csam: Fig }>();
  for (const t of THRESHOLDS) {
    const fig = (keep: (label: string) => boolean): Fig => {
      const f = { tp: 0, harmful: 0, fp: 0, benign: 0 };
      choice.forEach((e, i) => {
        if (!keep(e.label)) return;
        const hit = harm[i]! >= t;
        if (e.label === 'benign') {
          f.benign++;
          if (hit) f.fp++;
        } else {
          f.harmful++;
          if (hit) f.tp++;
        }
      });
      return f;
    };
    out.set(t, { all: fig(() => true), csam: fig((l) => l === 'csam') });
  }
  return out;
}

const authorOf = (file: string) => file.replace(/^.*\//, '');
const settingName = (r: CvRecord) => {
  const files = (v: string) => (v ? v.split(',').map(authorOf).join('+') : '');
  const train = [files(r.env.CV_AUTHORS ?? ''), files(r.env.CV_TRAIN ?? '')].filter((x) => x !== '').join(' + ');
  const p = r.params;
  return `corpus${train ? ` + ${train}` : ''}, weight ${p.harmWeight}, ${p.mix < 1 ? `neighbours (${p.mix}, ${p.k}, ${p.tau})` : 'no neighbours'}`;
};

const candidates: Candidate[] = [];
for (const r of records) {
  const scored = scoreChoice(JSON.parse(readFileSync(r.head, 'utf8')) as IntentHeadDoc);
  for (const t of THRESHOLDS) {
    const authors: Record<string, Fig> = {};
    for (const [file, per] of [...Object.entries(r.extra), ...Object.entries(r.authors)]) authors[authorOf(file)] = per[t]!;
    candidates.push({
      name: settingName(r),
      t,
      choice: scored.get(t)!.all,
      csam: scored.get(t)!.csam,
      dev: r.dev[t]!,
      authors,
      folds: r.folds[t]!,
      heldOut: r.heldOut[t]!,
    });
  }
}

// The committed head: its file, at its threshold, with the figures of its setting (the committed corpus and
// HEAD_PARAMS) from the same runs.
const committedRecord = records.find((r) => !r.env.CV_AUTHORS && !r.env.CV_TRAIN && JSON.stringify(r.params) === JSON.stringify(HEAD_PARAMS));
if (!committedRecord) throw new Error('the runs lack the committed setting (no CV_AUTHORS, no CV_TRAIN, HEAD_PARAMS)');
const committedScores = scoreChoice(JSON.parse(readFileSync(`${ROOT}rules/guardrails-intent-head.json`, 'utf8')) as IntentHeadDoc);
const base = candidates.find((c) => c.name === settingName(committedRecord) && c.t === HEAD_THRESHOLD)!;
const saved = committedScores.get(HEAD_THRESHOLD)!;
if (saved.all.tp !== base.choice.tp || saved.all.fp !== base.choice.fp)
  console.log(`note: the committed head file scores the choice set ${fmt(saved.all)}, its setting retrained ${fmt(base.choice)}`);
base.choice = saved.all;
base.csam = saved.csam;

function fmt(f: Fig): string {
  return `${f.tp}/${f.harmful}, ${f.fp}/${f.benign}`;
}
const sum = (c: Candidate, k: 'tp' | 'fp') => Object.values(c.authors).reduce((a, f) => a + f[k], 0);

const eligible = (c: Candidate) =>
  c.choice.fp <= base.choice.fp &&
  c.choice.tp >= base.choice.tp &&
  c.csam.tp >= base.csam.tp &&
  c.dev.tp >= base.dev.tp &&
  c.dev.fp <= base.dev.fp + 1 &&
  Object.entries(base.authors).every(([a, f]) => c.authors[a] !== undefined && c.authors[a].tp >= f.tp && c.authors[a].fp <= f.fp);
const order = (a: Candidate, b: Candidate) =>
  b.choice.tp - a.choice.tp || a.choice.fp - b.choice.fp || sum(b, 'tp') - sum(a, 'tp') || sum(a, 'fp') - sum(b, 'fp') || b.dev.tp - a.dev.tp || b.t - a.t;

console.log(
  'setting | threshold | choice set: asks caught, benign refused | csam asks | development set | authors (asks, benign) | team folds | held-out file | eligible',
);
for (const c of [...candidates].sort(order)) {
  console.log(
    [
      c === base ? `${c.name} (committed head)` : c.name,
      c.t,
      fmt(c.choice),
      `${c.csam.tp}/${c.csam.harmful}`,
      fmt(c.dev),
      Object.entries(c.authors)
        .map(([a, f]) => `${a} ${fmt(f)}`)
        .join('; '),
      fmt(c.folds),
      fmt(c.heldOut),
      eligible(c) ? 'yes' : 'no',
    ].join(' | '),
  );
}
const chosen = candidates.filter(eligible).sort(order)[0];
if (!chosen || (chosen.choice.tp === base.choice.tp && chosen.choice.fp === base.choice.fp)) {
  console.log(`\nchosen: none better than the committed head on the choice set (${fmt(base.choice)}); the committed head stays`);
} else {
  console.log(`\nchosen: ${chosen.name}, threshold ${chosen.t}: choice set ${fmt(chosen.choice)} against the committed head's ${fmt(base.choice)}`);
}
