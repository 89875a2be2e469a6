/**
 * Selects the rows of public prompt data sets that fall in the block rules' scope and writes them as
 * test/fixtures/guard/public/public.jsonl, the row format of the independent sets. The data were written by
 * people outside this project; the mapping rule (test/fixtures/guard/public/README.md) was written before
 * any row was scored, and it is applied here as explicit lists of source ids per label, so the selection is
 * read and replayed, not guessed by a pattern.
 *
 *   npx tsx scripts/intent-public-select.ts <dir with the source files, named as the README names them>
 *
 * Also writes train.tsv and eval.tsv beside it, the split a candidate head may be trained on and the part it
 * is measured on (README "Training split").
 *
 * Rows not listed are out of scope (violence, drugs, conventional weapons, hacking, generic scams, ...) and
 * are not vendored. XSTest's prompts labelled safe are all benign: they are the false-positive test.
 */
import { readFileSync, writeFileSync } from 'node:fs';

type Label = 'benign' | 'cbrn' | 'csam' | 'fraud';

/** A row of a CSV file: a column's value by the column's name ('' when absent). */
type CsvRow = (column: string) => string;

/** A minimal RFC 4180 reader: quoted fields, doubled quotes, newlines inside quotes. */
function csv(text: string): CsvRow[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') endField();
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else field += c;
  }
  if (field || row.length) endRow();
  const head = (rows[0] ?? []).map((h) => h.replace(/^\uFEFF/, ''));
  return rows
    .slice(1)
    .filter((r) => r.length > 1)
    .map((r) => (column: string) => r[head.indexOf(column)] ?? '');
}

/** The rule applied: in-scope source ids per label (README "Mapping rule"). */
const HARMBENCH: Record<string, Label> = Object.fromEntries([
  ...[
    'dimethylmercury_instructions_home',
    'bio_warfare_list_home',
    'chem_warfare_list_home',
    'water_supply_cholera_tampering_guide',
    'home_cultured_ecoli_antibiotic_resistance',
    'covid19_modifications_deadliness',
    'ebola_outbreak_spreading_plan',
    'gene_synthesis_cloud_bypass',
    'botulinum_toxin_manufacturing_guide',
    'lewisite_synthesis_instructions',
    'ricin_synthesis_home',
    'chlorine_gas_safe_home_manufacture',
    'tetrodotoxin_home_synthesis_guide',
    'biohazard_synthesis_lab_supplies_untraceable',
    'virus_spreading_subway_tips',
    'strychnine_plant_extraction_instructions',
    'parathion_synthesis_instructions',
    'sarin_ingredients_purchase_guide',
    'tabun_gas_home_synthesis_guide',
    'bsl4_lab_compromise_leak_plan',
    'university_lab_chemical_weapons_identification',
    'stealing_heu_y12_complex',
  ].map((id) => [id, 'cbrn']),
  ...[
    'fake_bank_security_msg',
    'credit_card_skimmer_setup',
    'stolen_credit_info_dark_web_buying',
    'personal_info_phishing_email',
    'phishing_bank_information',
    'stolen_credit_card_use_tips',
  ].map((id) => [id, 'fraud']),
]);
/** AdvBench rows by their 0-based row number in advbench_behaviors.csv (ids advbench_<n+1>). */
const ADVBENCH: Record<number, Label> = Object.fromEntries([
  ...[20, 51, 418].map((n) => [n, 'cbrn']),
  ...[76, 287, 431, 451].map((n) => [n, 'csam']),
  ...[
    4, 12, 18, 66, 84, 87, 93, 98, 99, 109, 114, 118, 122, 137, 152, 213, 226, 232, 247, 259, 279, 281, 282, 285, 288, 295, 299, 300, 304, 324, 358, 364, 375,
    383, 414, 429, 442, 455, 477, 499, 509, 516,
  ].map((n) => [n, 'fraud']),
]);
/** StrongREJECT rows by 0-based row number, only rows whose source is not AdvBench (those are above). */
const STRONGREJECT: Record<number, Label> = Object.fromEntries([
  ...[145, 267].map((n) => [n, 'cbrn']),
  ...[231, 234, 241].map((n) => [n, 'csam']),
  ...[0, 165, 176, 179, 180, 199, 200, 206].map((n) => [n, 'fraud']),
]);
const SST: Record<string, Label> = Object.fromEntries([
  ...['sst_081', 'sst_082', 'sst_083', 'sst_091', 'sst_092', 'sst_093', 'sst_095', 'sst_096', 'sst_097', 'sst_098', 'sst_100'].map((id) => [id, 'csam']),
  ...['sst_064', 'sst_066', 'sst_075', 'sst_076'].map((id) => [id, 'fraud']),
]);
/** XSTest's unsafe contrast prompts in scope; every prompt labelled safe is benign. */
const XSTEST_UNSAFE: Record<string, Label> = { '374': 'cbrn', '199': 'fraud', '249': 'fraud', '427': 'fraud', '446': 'fraud' };
/** MultiJail ids; each is kept in all ten languages. */
const MULTIJAIL: Record<string, Label> = {
  '18': 'cbrn',
  '12': 'fraud',
  '138': 'fraud',
  '179': 'fraud',
  '219': 'fraud',
  '241': 'fraud',
  '283': 'fraud',
};
const MULTIJAIL_LANGS = ['en', 'zh', 'it', 'vi', 'ar', 'ko', 'th', 'bn', 'sw', 'jv'];

interface Row {
  id: string;
  label: Label;
  lang: string;
  framing: string;
  source: string;
  category: string;
  messages: Array<{ role: 'user'; content: string }>;
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: intent-public-select.ts <dir with the source files>');
const read = (f: string) => csv(readFileSync(`${dir}/${f}`, 'utf8'));
const out: Row[] = [];
const push = (id: string, label: Label, lang: string, source: string, category: string, text: string) =>
  out.push({ id, label, lang, framing: 'plain', source, category, messages: [{ role: 'user', content: text.trim() }] });

for (const r of read('xstest_prompts.csv')) {
  const label = r('label') === 'safe' ? 'benign' : XSTEST_UNSAFE[r('id')];
  if (label) push(`xstest-${r('id')}`, label, 'en', 'xstest', r('type'), r('prompt'));
}
for (const r of read('sst.csv')) {
  const label = SST[r('id')];
  if (label) push(r('id'), label, 'en', 'simplesafetytests', r('harm_area'), r('prompts_final'));
}
for (const r of read('harmbench_behaviors_text_all.csv')) {
  // Standard behaviours only: a contextual one's context string is a procedure, which no fixture here holds.
  const label = HARMBENCH[r('BehaviorID')];
  if (label && r('FunctionalCategory') === 'standard') push(`harmbench-${r('BehaviorID')}`, label, 'en', 'harmbench', r('SemanticCategory'), r('Behavior'));
}
read('advbench_behaviors.csv').forEach((r, n) => {
  const label = ADVBENCH[n];
  if (label) push(r('BehaviorID').replace('_', '-'), label, 'en', 'advbench', '', r('Behavior'));
});
read('strongreject_dataset.csv').forEach((r, n) => {
  const label = STRONGREJECT[n];
  if (label && r('source') !== 'AdvBench') push(`strongreject-${n}`, label, 'en', 'strongreject', r('category'), r('forbidden_prompt'));
});
for (const r of read('MultiJail.csv')) {
  const label = MULTIJAIL[r('id')];
  if (label) for (const lang of MULTIJAIL_LANGS) push(`multijail-${r('id')}-${lang}`, label, lang, 'multijail', r('tags'), r(lang));
}

// A row whose text another source already holds (StrongREJECT copies AdvBench and others) is kept once.
const seen = new Set<string>();
const rows = out.filter((r) => {
  const k = r.messages[0]!.content.toLowerCase().replace(/\s+/g, ' ');
  return seen.has(k) ? false : (seen.add(k), true);
});
writeFileSync('test/fixtures/guard/public/public.jsonl', rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
// The training split (README "Training split"): by source and template, so no evaluation row is a trained
// row in other words or another language.
const TRAIN_SOURCES = new Set(['advbench', 'strongreject']);
const TRAIN_MULTIJAIL = new Set(['12', '179', '219']);
const TRAIN_SAFE_KINDS = new Set(['homonyms', 'safe_targets']);
const trained = (r: Row) =>
  r.label === 'benign'
    ? TRAIN_SAFE_KINDS.has(r.category)
    : TRAIN_SOURCES.has(r.source) || (r.source === 'multijail' && TRAIN_MULTIJAIL.has(r.id.split('-')[1]!));
const tsv = (part: Row[]) => part.map((r) => [r.label, r.lang, 'plain', r.messages[0]!.content.replace(/\s+/g, ' ')].join('\t')).join('\n') + '\n';
writeFileSync('test/fixtures/guard/public/train.tsv', tsv(rows.filter(trained)));
writeFileSync('test/fixtures/guard/public/eval.tsv', tsv(rows.filter((r) => !trained(r))));
const count = (f: (r: Row) => boolean) => rows.filter(f).length;
for (const s of [...new Set(rows.map((r) => r.source))])
  console.log(s, ['benign', 'cbrn', 'csam', 'fraud'].map((l) => `${l} ${count((r) => r.source === s && r.label === l)}`).join(', '));
console.log('rows', rows.length, 'dropped as duplicates', out.length - rows.length);
for (const [name, part] of [
  ['train', rows.filter(trained)],
  ['eval', rows.filter((r) => !trained(r))],
] as const)
  console.log(name, ['benign', 'cbrn', 'csam', 'fraud'].map((l) => `${l} ${part.filter((r) => r.label === l).length}`).join(', '));
