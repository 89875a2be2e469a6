/**
 * Guardrail throughput: how fast `scan` and `redact` read the largest request the firewall admits
 * (524,288 characters of input), for realistic text and for inputs built to hurt each pattern (long runs of
 * the characters a detector keys on). Every figure should stay in the same order of magnitude: a detector
 * whose time grows faster than its input would show here as a collapse in MB/s.
 *
 *   npx tsx bench/guard-scan.ts            # all inputs
 *   npx tsx bench/guard-scan.ts base64     # inputs whose name contains "base64"
 *   npx tsx bench/guard-scan.ts --json realistic,code   # JSON lines, inputs matching either (`npm run bench`)
 *   npx tsx bench/guard-scan.ts --built=/path/to/checkout   # its built dist/ (what `npm run bench` measures)
 *   npx tsx bench/guard-scan.ts --against=/tmp/old [filter[,filter]]
 *       # before/after: the guardrails of another checkout (`git archive <commit> | tar -x -C /tmp/old`)
 *       # and of this one, loaded side by side and run alternately on each input, so that the load of a
 *       # shared machine falls on both alike; also says whether both give the same result, and gives each
 *       # side's least CPU time of the runs (process.cpuUsage: what the machine's other work disturbs least)
 *
 * MB/s is UTF-8 megabytes (10^6 bytes) of input per second, median of several runs after a warm-up. Each
 * input is measured with the gateway's engine (the compiled scanner) and with the TypeScript reference
 * (`ts scan ms`, `referenceScanMs` in JSON).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ChatLike } from '../src/guard/index.js';
import { reviewText } from './harness/bodies.js';
import { EVASIONS, secretSamples } from '../test/guard/helpers/secrets.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAX_INPUT = 524_288;

// `--built=DIR` measures the compiled guardrails of a built checkout (DIR/dist), the code the gateway runs:
// under tsx an imported constant read in a hot loop goes through a getter (8 % of the code-review input's
// profile), so the source figures overstate the scan a little. `npm run bench` passes its built snapshot.
const built = process.argv.find((a) => a.startsWith('--built='))?.slice('--built='.length);
const lib = (await import(built ? `${built.replace(/\/$/, '')}/dist/guard/index.js` : '../src/guard/index.js')) as typeof import('../src/guard/index.js');
const doc = lib.loadGuardrailsDoc(`${ROOT}rules/guardrails.yaml`);
// The gateway's engine (the compiled scanner, src/guard/compiled.ts) and the TypeScript reference beside it.
const guard = lib.compileGuardrails(doc);
const reference = lib.compileGuardrails(doc, { engine: 'typescript' });

function fill(unit: string, length = MAX_INPUT): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = seeded(7);
const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));

function cleanCorpus(): string {
  const dir = `${ROOT}test/fixtures/guard/clean/`;
  return readdirSync(dir)
    .sort()
    .map((f) => readFileSync(dir + f, 'utf8'))
    .join('\n');
}

/** `text` cut into messages of ~8 KiB, user and assistant in turn. */
function messagesOf(text: string): ChatLike {
  const messages: ChatLike['messages'] = [];
  for (let i = 0; i < text.length; i += 8192) messages.push({ role: i % 16384 ? 'assistant' : 'user', content: text.slice(i, i + 8192) });
  return { messages };
}

/** The clean corpus fixtures, repeated to the input limit and cut into messages of ~8 KiB. */
const realistic = (): ChatLike => messagesOf(fill(cleanCorpus() + '\n'));

/**
 * The clean corpus with one secret (the test samples, generated) under one of the Unicode evasions after
 * every 20 lines, to the input limit, cut as `realistic`: the secret pass's detectors find something.
 */
function secretDense(): ChatLike {
  const samples = secretSamples();
  const evasions = Object.values(EVASIONS);
  const lines = cleanCorpus().split('\n');
  const parts: string[] = [];
  let n = 0;
  for (let i = 0; n < MAX_INPUT; i++) {
    const line = lines[i % lines.length] + '\n';
    const extra = i % 20 === 0 ? evasions[(i / 20) % evasions.length]!(samples[(i / 20) % samples.length]!.value) + '\n' : '';
    parts.push(line + extra);
    n += line.length + extra.length;
  }
  return messagesOf(parts.join('').slice(0, MAX_INPUT));
}

const one = (content: string): ChatLike => ({ messages: [{ role: 'user', content }] });

/** The shape of the gateway bench's request bodies (bench/harness/bodies.ts), at the input limit or `chars`. */
function codeReview(chars = MAX_INPUT): ChatLike {
  const system = 'You review code for security problems. Answer briefly.';
  return {
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: reviewText(chars - system.length) },
    ],
  };
}
const SK = ['s', 'k', '-'].join('');
const dashes = '-'.repeat(5);

const inputs: Array<[string, () => ChatLike]> = [
  ['realistic: clean corpus, 64 messages', realistic],
  ['secret-dense: clean corpus with a disguised secret every 20 lines', secretDense],
  ['code review: system turn and user turn', () => codeReview()],
  ["100 KB call: the gateway bench's large request body", () => codeReview(100_000)],
  ['prose: one message of English words', () => one(fill('the quick brown fox reviews code for buffer overflows and triages reports. '))],
  [`sk- repeated`, () => one(fill(SK))],
  ['sk- then a 524k key-alphabet run', () => one(SK + fill('a1B2-', MAX_INPUT - 3))],
  ['A run', () => one(fill('A'))],
  ['AKIA repeated', () => one(fill('AKIA'))],
  ['-----BEGIN repeated', () => one(fill(`${dashes}BEGIN `))],
  ['private-key headers repeated', () => one(fill(`${dashes}BEGIN RSA ${'PRIVATE'} KEY${dashes}\n`))],
  ['header then blank lines', () => one(`${dashes}BEGIN ${'PRIVATE'} KEY${dashes}` + fill('\n', MAX_INPUT - 40))],
  ['base64 run (random bytes)', () => one(randomBytes((MAX_INPUT * 3) / 4).toString('base64'))],
  [
    'base64 wrapped at 76 (random bytes)',
    () =>
      one(
        randomBytes((MAX_INPUT * 3) / 4)
          .toString('base64')
          .replace(/.{76}/g, '$&\n')
          .slice(0, MAX_INPUT),
      ),
  ],
  ['hex run (random bytes)', () => one(randomBytes(MAX_INPUT / 2).toString('hex'))],
  ['hex byte list', () => one(fill('de ad be ef '))],
  ['percent escapes', () => one(fill('%41'))],
  ['backslash-x escapes', () => one(fill('\\x41'))],
  ['unicode escapes', () => one(fill('\\u0041'))],
  ['zero-width run', () => one(fill('\u200b'))],
  ['zero-width between letters', () => one(fill('a\u200b'))],
  ['fullwidth text', () => one(fill('ｓｋ－ｐｒｏｊ　ｋｅｙ　'))],
  ['cyrillic homoglyph text', () => one(fill('АКІА ѕк-рrој '))],
  ['single letters (spelled-out evasion)', () => one(fill('s a r i n '))],
  ['one long word', () => one(fill('abcdefghij'))],
  [
    '256 messages of 2 KiB base64',
    () => ({
      messages: Array.from({ length: 256 }, () => ({ role: 'user', content: randomBytes(1536).toString('base64') })),
    }),
  ],
];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const json = process.argv.includes('--json');
const against = process.argv.find((a) => a.startsWith('--against='))?.slice('--against='.length);
const filter = process.argv.slice(2).find((a) => !a.startsWith('--'));

/** Median ms of `a` and of `b`, run alternately (after one warm-up each). */
function measurePair(a: () => void, b: () => void): [number, number] {
  a();
  b();
  const ta: number[] = [];
  const tb: number[] = [];
  const deadline = performance.now() + 3000;
  do {
    let t = performance.now();
    a();
    ta.push(performance.now() - t);
    t = performance.now();
    b();
    tb.push(performance.now() - t);
  } while (ta.length < 5 || (performance.now() < deadline && ta.length < 25));
  return [median(ta), median(tb)];
}

/** Least CPU ms (user + system, process.cpuUsage) of `a` and of `b` over `runs` runs each, alternating which goes first. */
function leastCpuPair(a: () => void, b: () => void, runs = 30): [number, number] {
  const cpu = (f: () => void) => {
    const c = process.cpuUsage();
    f();
    const d = process.cpuUsage(c);
    return (d.user + d.system) / 1000;
  };
  let la = Infinity;
  let lb = Infinity;
  for (let i = 0; i < runs; i++) {
    if (i % 2) {
      la = Math.min(la, cpu(a));
      lb = Math.min(lb, cpu(b));
    } else {
      lb = Math.min(lb, cpu(b));
      la = Math.min(la, cpu(a));
    }
  }
  return [la, lb];
}

if (against) {
  const old = (await import(`${against.replace(/\/$/, '')}/src/guard/index.ts`)) as typeof import('../src/guard/index.js');
  // This checkout's rules, or the other checkout's own when its code cannot compile them (a rules file that
  // names secret kinds or detectors the older code does not know): then findings differ by design.
  let before: ReturnType<typeof old.compileGuardrails>;
  try {
    before = old.compileGuardrails(old.loadGuardrailsDoc(`${ROOT}rules/guardrails.yaml`));
  } catch (err) {
    console.log(`(the other checkout cannot compile this rules file - ${(err as Error).message} - so it runs with its own)`);
    before = old.compileGuardrails(old.loadGuardrailsDoc(`${against.replace(/\/$/, '')}/rules/guardrails.yaml`));
  }
  const table: string[][] = [['input', 'scan before', 'scan after', 'least cpu before', 'least cpu after', 'redact before', 'redact after', 'same']];
  for (const [name, build] of inputs) {
    if (filter && !filter.split(',').some((f) => name.includes(f))) continue;
    const req = build();
    const same =
      JSON.stringify(before.scan(req)) === JSON.stringify(guard.scan(req)) && JSON.stringify(before.redact(req)) === JSON.stringify(guard.redact(req));
    const [sb, sa] = measurePair(
      () => before.scan(req),
      () => guard.scan(req),
    );
    const [rb, ra] = measurePair(
      () => before.redact(req),
      () => guard.redact(req),
    );
    const [cb, ca] = leastCpuPair(
      () => before.scan(req),
      () => guard.scan(req),
    );
    table.push([name, sb.toFixed(1), sa.toFixed(1), cb.toFixed(2), ca.toFixed(2), rb.toFixed(1), ra.toFixed(1), same ? 'yes' : 'NO']);
  }
  const w = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
  process.exit(0);
}

const rows: string[][] = [['input', 'chars', 'MB', 'scan ms', 'scan MB/s', 'redact ms', 'redact MB/s', 'ts scan ms', 'ts redact ms']];
for (const [name, build] of inputs) {
  if (filter && !filter.split(',').some((f) => name.includes(f))) continue;
  const req = build();
  let chars = 0;
  let bytes = 0;
  for (const m of req.messages) {
    chars += m.content?.length ?? 0;
    bytes += Buffer.byteLength(m.content ?? '');
  }
  const [scanMs, referenceScanMs] = measurePair(
    () => guard.scan(req),
    () => reference.scan(req),
  );
  const [redactMs, referenceRedactMs] = measurePair(
    () => guard.redact(req),
    () => reference.redact(req),
  );
  const mb = bytes / 1e6;
  if (json) {
    console.log(JSON.stringify({ input: name, chars, bytes, scanMs, redactMs, referenceScanMs, referenceRedactMs }));
    continue;
  }
  rows.push([
    name,
    String(chars),
    mb.toFixed(2),
    scanMs.toFixed(1),
    (mb / (scanMs / 1000)).toFixed(1),
    redactMs.toFixed(1),
    (mb / (redactMs / 1000)).toFixed(1),
    referenceScanMs.toFixed(1),
    referenceRedactMs.toFixed(1),
  ]);
}
if (json) process.exit(0);
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) console.log(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  '));
