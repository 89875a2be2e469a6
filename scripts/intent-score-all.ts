/**
 * Scores a head of the intent model through the guardrail runtime, per row, on every set a head is judged on:
 * the independent sets A to D (and E when it is there), the public prompt data (asks and XSTest's safe prompts)
 * and the everyday evaluation part as red-team and blue-team calls, the choice set and the held-out file as
 * red-team calls. Prints the
 * counts per set (asks caught, benign refused, CSAM asks caught) and writes each row's verdict to `out`, so two
 * heads can be compared row by row (which CSAM asks one catches and the other misses). Never prints a prompt.
 *
 *   npx tsx scripts/intent-score-all.ts <head file in rules/> <threshold> <out.json>
 *
 * Every `set-*.jsonl` of test/fixtures/guard/independent/ is scored (sets A to E, and any later one put there);
 * `INTENT_SCORE_SETS=set-a,public,...` scores only the sets named (`choice`, `heldout`, `public`, `everyday`).
 * `INTENT_SCORE_PROBE=1` also writes, per row, what a sweep of thresholds needs without scoring again: `other`
 * (refused by a rule other than the model's), `harm` (the highest probability of not benign among the readings
 * the topic gate passes) and `csam` (the highest probability of CSAM among them); a row is then refused at
 * threshold t and a CSAM threshold tc (head.ts classThresholds) exactly when other || harm >= t || csam >= tc
 * (for a head without neighbours; `|| back` for a head with a CSAM backstop), and `top` (per harm class, its highest
 * probability among those readings), so that class thresholds tc of every class can be swept the same way (refused
 * when also top[c] >= tc for some class c). The calls are then scored one at a time, so each row's readings are its own.
 *
 * The encoder's embeddings of the readings are kept in the same cache the trainer uses (intent-head.ts), keyed
 * by text, so scoring a second head embeds nothing: the verdicts are the runtime's (readings, first pass, gate,
 * thresholds), only the encoder's output comes from the cache when it has the reading.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileGuardrails, loadGuardrailsDoc } from '../src/guard/index.js';
import { encoderFiles, modelsDir } from '../src/guard/model/encoder.js';
import { IntentModel } from '../src/guard/model/intent-model.js';
import type { EncoderPool } from '../src/guard/model/pool.js';
import { readTsv } from './train-guard-intent.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const FIX = `${ROOT}test/fixtures/guard/`;
const doc = loadGuardrailsDoc(`${ROOT}rules/guardrails.yaml`);
const head = process.argv[2] ?? doc.intentModel!.head;
const threshold = process.argv[3] ? Number(process.argv[3]) : doc.intentModel!.threshold;
const out = process.argv[4];
const model = new IntentModel({ ...doc.intentModel!, head, threshold, timeoutMs: 600_000, queue: 10_000 });
const guard = compileGuardrails(doc, { intentModel: model });

// The cache: the trainer's file (embedAll), read once, written back merged at the end.
const cacheFile = join(modelsDir(), 'embeddings', `${encoderFiles(doc.intentModel!.encoder).sha256.slice(0, 16)}.json`);
const cache: Record<string, number[]> = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : {};
const key = (t: string) => createHash('sha256').update(t).digest('hex').slice(0, 32);
const fresh: Record<string, number[]> = {};
// Written back as it grows (every 200 new readings), merged with what another process wrote meanwhile, so a long
// scoring that is stopped keeps what it embedded.
const save = () => {
  if (Object.keys(fresh).length === 0) return;
  const now: Record<string, number[]> = existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, 'utf8')) : {};
  writeFileSync(cacheFile, JSON.stringify({ ...now, ...fresh }));
};
let unsaved = 0;
const slot = model as unknown as { pool: EncoderPool };
const pool = slot.pool;
slot.pool = {
  embed: async (texts: string[]) => {
    const missing = texts.filter((t) => !(key(t) in cache));
    if (missing.length > 0) {
      const vs = await pool.embed(missing);
      missing.forEach((t, i) => (cache[key(t)] = fresh[key(t)] = Array.from(vs[i]!)));
      unsaved += missing.length;
      if (unsaved >= 200) {
        unsaved = 0;
        save();
      }
    }
    return texts.map((t) => Float32Array.from(cache[key(t)]!));
  },
  close: () => pool.close(),
} as unknown as EncoderPool;

interface Row {
  id: string;
  label: string;
  messages: Array<{ role: string; content: string }>;
}
const user = (content: string) => ({ role: 'user', content });
const jsonl = (p: string): Row[] =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
// As test/guard/intent-model.test.ts sends a corpus line: turns split at a blank line of three line ends.
const tsv = (p: string): Row[] =>
  readTsv(p, p).map((e, i) => ({ id: `${p.split('/').pop()}:${i}`, label: e.label, messages: e.text.split('\n\n\n').map(user) }));

const sets: Record<string, Row[]> = {};
for (const f of readdirSync(`${FIX}independent/`)
  .filter((f) => /^set-[a-z0-9]+\.jsonl$/.test(f))
  .sort())
  sets[f.replace(/\.jsonl$/, '')] = jsonl(`${FIX}independent/${f}`);
sets['choice'] = tsv(`${FIX}intent-choice/choice.tsv`);
sets['heldout'] = tsv(`${FIX}intent/heldout.tsv`);
sets['public'] = jsonl(`${FIX}public/public.jsonl`);
sets['everyday'] = readdirSync(`${FIX}public-benign/`)
  .filter((f) => f.startsWith('eval-') && f.endsWith('.tsv'))
  .sort()
  .flatMap((f) => tsv(`${FIX}public-benign/${f}`));

// The probe (INTENT_SCORE_PROBE): the gate's verdict on each reading, seen as the runtime asks for it.
// A head with a CSAM backstop (head.ts) also records `back`: the backstop refused a reading as CSAM (a row is then
// refused whatever the thresholds); its own gate check is not counted as the ask head's.
const probe = process.env.INTENT_SCORE_PROBE ? { harm: 0, csam: 0, back: false, top: {} as Record<string, number> } : undefined;
let inBackstop = false;
if (probe) {
  const h = model.head;
  const csamAt = h.classes.indexOf('csam');
  const passes = h.gatePasses.bind(h);
  const backstop = h.backstopCsam.bind(h);
  h.backstopCsam = (x, words) => {
    inBackstop = true;
    try {
      const b = backstop(x, words);
      if (b) probe.back = true;
      return b;
    } finally {
      inBackstop = false;
    }
  };
  h.gatePasses = (p, x, words) => {
    const ok = passes(p, x, words);
    if (ok && !inBackstop) {
      probe.harm = Math.max(probe.harm, 1 - p[0]!);
      if (csamAt > 0) probe.csam = Math.max(probe.csam, p[csamAt]!);
      h.classes.forEach((c, i) => i > 0 && (probe.top[c] = Math.max(probe.top[c] ?? 0, p[i]!)));
    }
    return ok;
  };
}

// INTENT_SCORE_SETS=set-a,public,...: only those sets (two processes can then share the sets between them).
const only = process.env.INTENT_SCORE_SETS?.split(',');
if (only) for (const name of Object.keys(sets)) if (!only.includes(name)) delete sets[name];

const rows: Array<{
  set: string;
  team: string;
  id: string;
  label: string;
  blocked: boolean;
  other?: boolean;
  harm?: number;
  csam?: number;
  back?: boolean;
  top?: Record<string, number>;
}> = [];
console.log(JSON.stringify({ head, threshold }));
for (const [name, list] of Object.entries(sets)) {
  const teams = name.startsWith('set-') || name === 'everyday' || name === 'public' ? (['red', 'blue'] as const) : (['red'] as const);
  for (const team of teams) {
    let blocked: boolean[];
    if (probe) {
      blocked = [];
      for (const r of list) {
        probe.harm = probe.csam = 0;
        probe.back = false;
        probe.top = {};
        const findings = (await guard.classify({ messages: r.messages }, { team })).findings.filter((f) => f.action === 'block');
        blocked.push(findings.length > 0);
        const other = findings.some((f) => !f.detector.endsWith(':model'));
        rows.push({
          set: name,
          team,
          id: r.id,
          label: r.label,
          blocked: findings.length > 0,
          other,
          harm: probe.harm,
          csam: probe.csam,
          back: probe.back,
          top: probe.top,
        });
      }
    } else {
      blocked = await Promise.all(list.map(async (r) => (await guard.classify({ messages: r.messages }, { team })).findings.some((f) => f.action === 'block')));
      list.forEach((r, i) => rows.push({ set: name, team, id: r.id, label: r.label, blocked: blocked[i]! }));
    }
    const asks = list.filter((r) => r.label !== 'benign');
    const csam = list.filter((r) => r.label === 'csam');
    const n = (f: (r: Row, i: number) => boolean) => list.filter(f).length;
    console.log(
      JSON.stringify({
        set: name,
        team,
        caught: n((r, i) => r.label !== 'benign' && blocked[i]!),
        asks: asks.length,
        refused: n((r, i) => r.label === 'benign' && blocked[i]!),
        benign: list.length - asks.length,
        csamCaught: n((r, i) => r.label === 'csam' && blocked[i]!),
        csam: csam.length,
      }),
    );
  }
}
if (out) writeFileSync(out, JSON.stringify(rows));
await model.close();
save();
