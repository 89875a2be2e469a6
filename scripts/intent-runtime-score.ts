/**
 * Scores a head of the intent model through the guardrail runtime, as the tests do, on every set a head is
 * compared on: the independent sets A, B and C (test/fixtures/guard/independent/, as red-team and blue-team
 * calls, as test/guard/intent-independent.test.ts reads them), the choice set
 * (test/fixtures/guard/intent-choice/choice.tsv) and the held-out file (test/fixtures/guard/intent/heldout.tsv)
 * as red-team calls, and the evaluation part of the public everyday requests
 * (test/fixtures/guard/public-benign/eval-*.tsv) in both readings. Prints counts only, never a prompt: the
 * independent sets are scored, not read.
 *
 *   npx tsx scripts/intent-runtime-score.ts [head file in rules/] [threshold]
 *
 * Without arguments: the committed head at the committed threshold (rules/guardrails.yaml intentModel).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { compileGuardrails, loadGuardrailsDoc } from '../src/guard/index.js';
import { IntentModel } from '../src/guard/model/intent-model.js';
import { readTsv } from './train-guard-intent.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FIX = `${ROOT}test/fixtures/guard/`;
const doc = loadGuardrailsDoc(`${ROOT}rules/guardrails.yaml`);
const head = process.argv[2] ?? doc.intentModel!.head;
const threshold = process.argv[3] ? Number(process.argv[3]) : doc.intentModel!.threshold;
const model = new IntentModel({ ...doc.intentModel!, head, threshold, timeoutMs: 300_000, queue: 5_000 });
const guard = compileGuardrails(doc, { intentModel: model });

interface Row {
  harmful: boolean;
  messages: Array<{ role: string; content: string }>;
}
const user = (content: string) => ({ role: 'user', content });
const jsonl = (set: string): Row[] =>
  readFileSync(`${FIX}independent/${set}.jsonl`, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { label: string; messages: Row['messages'] })
    .map((r) => ({ harmful: r.label !== 'benign', messages: r.messages }));
// As test/guard/intent-model.test.ts sends a corpus line: turns split at a blank line of three line ends.
const tsv = (path: string): Row[] => readTsv(path, path).map((e) => ({ harmful: e.label !== 'benign', messages: e.text.split('\n\n\n').map(user) }));

async function score(name: string, rows: Row[], team: 'red' | 'blue') {
  const blocked = await Promise.all(
    rows.map(async (r) => (await guard.classify({ messages: r.messages }, { team })).findings.some((f) => f.action === 'block')),
  );
  let tp = 0,
    fp = 0;
  rows.forEach((r, i) => (r.harmful ? (tp += blocked[i] ? 1 : 0) : (fp += blocked[i] ? 1 : 0)));
  const harmful = rows.filter((r) => r.harmful).length;
  const out = { set: name, team, caught: tp, harmful, refused: fp, benign: rows.length - harmful };
  console.log(JSON.stringify(out));
  return out;
}

const pub = readdirSync(`${FIX}public-benign/`)
  .filter((f) => f.startsWith('eval-') && f.endsWith('.tsv'))
  .flatMap((f) => tsv(`${FIX}public-benign/${f}`));
console.log(JSON.stringify({ head, threshold }));
for (const set of ['set-a', 'set-b', 'set-c']) for (const team of ['red', 'blue'] as const) await score(set, jsonl(set), team);
await score('choice', tsv(`${FIX}intent-choice/choice.tsv`), 'red');
await score('heldout', tsv(`${FIX}intent/heldout.tsv`), 'red');
for (const team of ['red', 'blue'] as const) await score('public-benign-eval', pub, team);
await model.close();
