/**
 * Builds test/fixtures/guard/public-benign/ from public, permissively licensed data sets of everyday
 * requests (the README there names each source, its commit, date and licence): the false-positive measure
 * of the intent model on traffic it was not written for, and benign training lines for a head that is not
 * to read "unfamiliar language or register" as harm.
 *
 *   npx tsx scripts/public-benign-build.ts <dir holding the four source checkouts>
 *
 * The source checkouts are git directories (read with `git show <commit>:<path>`, so the commit pins what is
 * read): mainlp+xsid, google-research+url-nlp, clinc+oos-eval, zorazrw+multilingual-conala, each with a
 * `repo` directory inside. Deterministic: the same commits give the same files.
 *
 * The split is made before any row is scored, by source, language group and item, never by random rows:
 * - xSID (parallel assistant requests in 17 language varieties): utterance ids are dealt into train and
 *   eval by a hash of the id, so no translation of a trained utterance is in eval; kk, lt, sr, nap and de-ba
 *   are eval only (a language group training never sees).
 * - MGSM (parallel grade-school word problems in 11 languages): problems are dealt by index the same way;
 *   bn and te are eval only.
 * - CLINC150 (English assistant requests in 150 intents): the intents are dealt, so eval's requests are of
 *   intents training never saw; its out-of-scope requests are eval only.
 * - MCoNaLa (programming questions from the Spanish, Japanese and Russian StackOverflow): eval only, a
 *   source training never sees.
 * Rows that name a harm topic of the block rules (HARM below) are dropped from both parts, read or not.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readCorpus } from './train-guard-intent.js';

const OUT = fileURLToPath(new URL('../test/fixtures/guard/public-benign/', import.meta.url));
const src = process.argv[2];
if (!src) throw new Error('usage: npx tsx scripts/public-benign-build.ts <dir of source checkouts>');

const SOURCES = {
  xsid: { repo: 'mainlp/xsid', commit: '761d926c3f2e9f6bea13192d2f39cec1d04d9777' },
  mgsm: { repo: 'google-research/url-nlp', commit: '452a21ad3dae5668c06ceeac21ff073e1e40f9be' },
  clinc: { repo: 'clinc/oos-eval', commit: '828f8093932c8fe6ca7936c3d2e52903b1c523de' },
  mconala: { repo: 'zorazrw/multilingual-conala', commit: 'b48112fe492432507d72004aafb6f0c399308333' },
} as const;

const show = (source: keyof typeof SOURCES, path: string) =>
  execFileSync('git', ['-C', `${src}/${SOURCES[source].repo.replace('/', '+')}/repo`, 'show', `${SOURCES[source].commit}:${path}`], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });

/** A number in [0, 1) from a key: the deterministic coin of every choice below. */
const coin = (key: string) => createHash('sha256').update(key).digest().readUInt32BE(0) / 2 ** 32;

/**
 * Harm topics of the block rules (CBRN weapons, sexual content with minors, fraud tools and products), in
 * the languages the sources hold, as words or word starts. A row matching any is dropped, whatever it asks:
 * this set is everyday traffic, and a row near a blocked topic is not what it measures.
 */
const HARM = new RegExp(
  [
    // CBRN
    'weapon',
    'bomb',
    'explosiv',
    'nerve agent',
    'sarin',
    'vx\\b',
    'anthrax',
    'ricin',
    'toxin',
    'pathogen',
    'uranium',
    'plutonium',
    'radioactiv',
    'nuclear',
    'chemical weapon',
    'poison',
    'giftig',
    'waffe',
    'bombe',
    '\\barma',
    'veneno',
    '\\barme\\b',
    'оружи',
    'бомб',
    'взрыв',
    '武器',
    '爆弾',
    '爆炸',
    '炸弹',
    '毒',
    'سلاح',
    'قنبلة',
    'silah',
    'bomba',
    'zehir',
    'senjata',
    'racun',
    // sexual content, minors
    '\\bsex',
    'porn',
    'nude',
    'naked',
    'nackt',
    'desnud',
    'секс',
    'порн',
    'エロ',
    '裸',
    '色情',
    // fraud
    'fraud',
    'scam',
    'phish',
    'launder',
    'counterfeit',
    'fake id',
    'stolen',
    'carding',
    'betrug',
    'estafa',
    'fraude',
    'arnaque',
    'мошен',
    'фишинг',
    'украд',
    '詐欺',
    '诈骗',
    '盗',
    'احتيال',
    'dolandır',
    'penipuan',
    // weapons of the everyday kind too (guns, knives in a request are not everyday traffic either)
    '\\bgun',
    'rifle',
    'pistol',
    'ammunition',
    'munition',
  ].join('|'),
  'i',
);

interface Row {
  lang: string;
  text: string;
  /** The item a translation shares (a parallel source's id), or the row's own key. */
  item: string;
}

/** Rows dropped by HARM, printed so the rule can be checked by eye. */
const dropped: Row[] = [];
const harmless = (r: Row) => (HARM.test(r.text) ? (dropped.push(r), false) : true);

const clean = (t: string) =>
  t
    .replace(/\s+/g, ' ')
    .trim()
    // Japanese and Chinese rows of xSID are split into words with spaces; the text is written without them.
    .replace(
      /(?<=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー、。？！]) (?=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}ー、。？！])/gu,
      '',
    );

function xsid(): { train: Row[]; eval: Row[] } {
  const trainLangs = ['ar', 'da', 'de', 'en', 'gsw', 'id', 'it', 'ja', 'nl', 'no', 'tr', 'zh'];
  const evalOnly = ['kk', 'lt', 'sr', 'nap', 'de-ba'];
  const rows = new Map<string, Row[]>();
  for (const lang of [...trainLangs, ...evalOnly]) {
    const blocks = show('xsid', `data/xSID-0.7/${lang}.test.conll`).split(/\n\s*\n/);
    const seen = new Set<string>();
    const out: Row[] = [];
    blocks.forEach((b, n) => {
      const text = /^# text = (.*)$/m.exec(b)?.[1];
      if (!text) return;
      // English has no id lines: its blocks are in id order. Norwegian ids are id/speaker: one speaker per id.
      const id = (/^# id = ([^\s/]+)/m.exec(b)?.[1] ?? String(n + 1)).trim();
      if (seen.has(id)) return;
      seen.add(id);
      out.push({ lang: lang === 'de-ba' ? 'bar' : lang, text: clean(text), item: `xsid:${id}` });
    });
    rows.set(lang, out);
  }
  const evalItem = (item: string) => coin(`split:${item}`) < 0.5;
  const pick = (rs: Row[], n: number, salt: string) =>
    rs
      .map((r) => ({ r, k: coin(`${salt}:${r.lang}:${r.item}`) }))
      .sort((a, b) => a.k - b.k)
      .slice(0, n)
      .map((x) => x.r);
  const train: Row[] = [];
  const evalRows: Row[] = [];
  for (const [lang, rs] of rows) {
    const ok = rs.filter(harmless);
    evalRows.push(
      ...pick(
        ok.filter((r) => evalItem(r.item)),
        30,
        'eval',
      ),
    );
    if (trainLangs.includes(lang))
      train.push(
        ...pick(
          ok.filter((r) => !evalItem(r.item)),
          50,
          'train',
        ),
      );
  }
  return { train, eval: evalRows };
}

function mgsm(): { train: Row[]; eval: Row[] } {
  const trainLangs = ['en', 'es', 'fr', 'de', 'ru', 'zh', 'ja', 'th', 'sw'];
  const evalOnly = ['bn', 'te'];
  const train: Row[] = [];
  const evalRows: Row[] = [];
  for (const lang of [...trainLangs, ...evalOnly]) {
    const rs = show('mgsm', `mgsm/mgsm_${lang}.tsv`)
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l, i) => ({ lang, text: clean(l.split('\t')[0]!), item: `mgsm:${i}` }))
      .filter(harmless);
    const pick = (sel: Row[], n: number, salt: string) =>
      sel
        .map((r) => ({ r, k: coin(`${salt}:${lang}:${r.item}`) }))
        .sort((a, b) => a.k - b.k)
        .slice(0, n)
        .map((x) => x.r);
    const evalItem = (r: Row) => coin(`split:${r.item}`) < 0.5;
    evalRows.push(...pick(rs.filter(evalItem), 15, 'eval'));
    if (trainLangs.includes(lang))
      train.push(
        ...pick(
          rs.filter((r) => !evalItem(r)),
          25,
          'train',
        ),
      );
  }
  return { train, eval: evalRows };
}

function clinc(): { train: Row[]; eval: Row[] } {
  const d = JSON.parse(show('clinc', 'data/data_full.json')) as Record<string, Array<[string, string]>>;
  const all = [...d.train!, ...d.val!, ...d.test!];
  const intents = [...new Set(all.map(([, i]) => i))].sort();
  const evalIntent = (i: string) => coin(`split:clinc:${i}`) < 0.3;
  const train: Row[] = [];
  const evalRows: Row[] = [];
  for (const intent of intents) {
    const rs = all
      .filter(([, i]) => i === intent)
      .map(([t]) => ({ lang: 'en', text: clean(t), item: `clinc:${intent}:${t}` }))
      .filter(harmless)
      .map((r) => ({ r, k: coin(`pick:${r.item}`) }))
      .sort((a, b) => a.k - b.k)
      .map((x) => x.r);
    if (evalIntent(intent)) evalRows.push(...rs.slice(0, 3));
    else train.push(...rs.slice(0, 2));
  }
  const oos = [...d.oos_test!]
    .map(([t]) => ({ lang: 'en', text: clean(t), item: `clinc:oos:${t}` }))
    .filter(harmless)
    .map((r) => ({ r, k: coin(`pick:${r.item}`) }))
    .sort((a, b) => a.k - b.k)
    .slice(0, 50)
    .map((x) => x.r);
  return { train, eval: [...evalRows, ...oos] };
}

function mconala(): Row[] {
  const out: Row[] = [];
  for (const lang of ['es', 'ja', 'ru']) {
    const rs = (JSON.parse(show('mconala', `dataset/test/${lang}_test.json`)) as Array<{ intent: string; question_id: number }>)
      .map((r) => ({ lang, text: clean(r.intent), item: `mconala:${lang}:${r.question_id}` }))
      .filter((r) => r.text.length >= 8 && harmless(r));
    out.push(
      ...rs
        .map((r) => ({ r, k: coin(`pick:${r.item}`) }))
        .sort((a, b) => a.k - b.k)
        .slice(0, 60)
        .map((x) => x.r),
    );
  }
  return out;
}

/** Texts of the training part and of the corpus's training lines: an evaluation row with one of them is dropped. */
const trained = new Set(
  readCorpus()
    .examples.filter((e) => !e.heldOut)
    .map((e) => e.text),
);

function write(file: string, header: string, rows: Row[]): void {
  const seen = new Set<string>(file.startsWith('eval-') ? trained : []);
  const lines = rows
    .filter((r) => r.text !== '' && !seen.has(r.text) && seen.add(r.text))
    .map((r) => `benign\t${r.lang}\tplain\t${r.text.replaceAll('\t', ' ')}`);
  if (file.startsWith('train-')) for (const r of rows) trained.add(r.text);
  writeFileSync(
    `${OUT}${file}`,
    `${header
      .trim()
      .split('\n')
      .map((l) => `# ${l}`)
      .join('\n')}\n${lines.join('\n')}\n`,
  );
  console.log(`${file}: ${lines.length} rows, ${new Set(rows.map((r) => r.lang)).size} languages`);
}

mkdirSync(OUT, { recursive: true });
const x = xsid();
const m = mgsm();
const c = clinc();
const s = (k: keyof typeof SOURCES) => `${SOURCES[k].repo}@${SOURCES[k].commit}`;
write('train-xsid.tsv', `xSID 0.7 (${s('xsid')}, CC BY-SA 4.0), training part: see README.md`, x.train);
write('train-mgsm.tsv', `MGSM (${s('mgsm')}, CC BY 4.0), training part: see README.md`, m.train);
write('train-clinc.tsv', `CLINC150 (${s('clinc')}, CC BY 3.0), training part: see README.md`, c.train);
write('eval-xsid.tsv', `xSID 0.7 (${s('xsid')}, CC BY-SA 4.0), evaluation part, never trained on: see README.md`, x.eval);
write('eval-mgsm.tsv', `MGSM (${s('mgsm')}, CC BY 4.0), evaluation part, never trained on: see README.md`, m.eval);
write('eval-clinc.tsv', `CLINC150 (${s('clinc')}, CC BY 3.0), evaluation part, never trained on: see README.md`, c.eval);
write('eval-mconala.tsv', `MCoNaLa (${s('mconala')}, CC BY-SA 4.0), evaluation part, never trained on: see README.md`, mconala());
console.log(`dropped by the harm-topic rule: ${dropped.length}`);
for (const r of dropped) console.log(`  ${r.item} ${r.lang}: ${r.text.slice(0, 120)}`);
