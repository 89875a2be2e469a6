/**
 * A seeded, bounded fuzz of the two scanner engines where state can leak between calls: random texts of
 * paired and lone surrogates, astral characters (mathematical letters, emoji, ideographs, tag characters),
 * keys written in them, cut into messages at random units (inside pairs more often than not, so each part is
 * a sliced string that starts or ends with half a pair), read through the public scan and redact and through
 * the compiled passes one by one; between them, inputs large enough to grow the module's memory past
 * RETAINED_MEMORY, small texts read in that grown memory, and the fresh instance that follows. The rounds
 * run long enough for V8 to optimise every function on the way (the class of bug this hunts: a Node 24
 * optimised `codePointAt` once read past a sliced string's end).
 */
import { expect } from 'chai';
import { compiledScanner, RETAINED_MEMORY } from '../../src/guard/compiled.js';
import { compileGuardrails, loadGuardrailsDoc, normalise, type ChatLike } from '../../src/guard/index.js';
import { keywordStarts } from '../../src/guard/generic.js';
import { lacedCandidates } from '../../src/guard/laced.js';
import { anchorStarts } from '../../src/guard/secrets.js';
import { scanRuns } from '../../src/guard/encodings.js';
import { fillStream } from '../../src/guard/lexical.js';
import { WordStream } from '../../src/guard/words.js';
import { providerSamples } from './helpers/evasions.js';
import { RULES_DIR } from './helpers/guardrails.js';
import { rng, secretSamples } from './helpers/secrets.js';

const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
const reference = compileGuardrails(doc, { engine: 'typescript' });
const compiled = compileGuardrails(doc);
const keys = [...secretSamples(), ...providerSamples()].map((s) => s.value);

const SEED = 20261128;
const ROUNDS = 600;

/** Letters and digits as astral look-alikes: mathematical bold, italic, double-struck, monospace. */
const ALPHABETS = [
  [0x1d400, 0x1d41a, 0x1d7ce],
  [0x1d434, 0x1d44e, 0x1d7ce],
  [0x1d538, 0x1d552, 0x1d7d8],
  [0x1d670, 0x1d68a, 0x1d7f6],
];

function generator(seed: number) {
  const r = rng(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const astral = (s: string) => {
    const [upper, lower, digit] = pick(ALPHABETS);
    // Double-struck capitals have holes (U+1D53A and others are unassigned): those stay BMP letters.
    return s.replace(/[A-Za-z0-9]/g, (c) => {
      const u = c.charCodeAt(0);
      const cp = u >= 0x61 ? lower! + u - 0x61 : u >= 0x41 ? upper! + u - 0x41 : digit! + u - 0x30;
      return r() < 0.9 ? String.fromCodePoint(cp) : c;
    });
  };
  const pieces: Array<() => string> = [
    () => String.fromCharCode(0xd800 + int(0x400)), // a lone high surrogate
    () => String.fromCharCode(0xdc00 + int(0x400)), // a lone low surrogate
    () => String.fromCharCode(0xdc00 + int(0x400), 0xd800 + int(0x400)), // a pair the wrong way round
    () => String.fromCodePoint(0x1f600 + int(80)), // emoji
    () => String.fromCodePoint(0x20000 + int(0x2000)), // ideographs
    () => String.fromCodePoint(0xe0041 + int(26)), // tag characters (removed by normalisation)
    () => String.fromCodePoint(0x1d400 + int(0x3ff)), // mathematical alphanumerics, some unassigned
    () => astral(pick(keys)),
    () => pick(keys),
    () => astral(pick(['the key is ', 'api_key=', 'password: ', 'token ', 'BEGIN PRIVATE KEY', 'sk-', 'AKIA', 'ghp_'])),
    () => pick([' ', '\n', '-', '_', '.', ': ', '"', '\u200b', 'é', 'ß', 'İ', 'ﬃ']),
    () => 'word '.repeat(1 + int(4)),
  ];
  const text = (max: number) => {
    let s = '';
    while (s.length < max) s += pick(pieces)();
    return s;
  };
  /** 1 to 3 cut points, most of them between the two units of a pair when the text has one. */
  const cuts = (t: string): number[] => {
    const inside: number[] = [];
    for (let i = 1; i < t.length; i++) if (t.charCodeAt(i - 1) >= 0xd800 && t.charCodeAt(i - 1) <= 0xdbff) inside.push(i);
    const out = new Set<number>();
    for (let k = 1 + int(3); k > 0; k--) out.add(inside.length > 0 && r() < 0.75 ? pick(inside) : 1 + int(t.length - 1));
    return [...out].sort((a, b) => a - b);
  };
  return { r, int, text, cuts };
}

const chat = (...contents: string[]): ChatLike => ({ messages: contents.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content })) });

/** Parts of `t` cut at `at`: each a slice of `t` (so a view of it, when 13 units or more). */
function parts(t: string, at: readonly number[]): string[] {
  const out: string[] = [];
  let from = 0;
  for (const c of [...at, t.length]) {
    if (c > from) out.push(t.slice(from, c));
    from = c;
  }
  return out;
}

/** Both engines' findings and redactions of `req`. */
function sameFindings(req: ChatLike, label: string): void {
  const a = reference.scan(req);
  const b = compiled.scan(req);
  if (JSON.stringify(a) !== JSON.stringify(b)) expect(b, `scan: ${label}`).to.deep.equal(a);
  const c = reference.redact(req);
  const d = compiled.redact(req);
  if (JSON.stringify(c) !== JSON.stringify(d)) expect(d, `redact: ${label}`).to.deep.equal(c);
}

/** The compiled passes against the TypeScript ones on `t` (normalised, searched, encoded runs, words). */
function samePasses(t: string, label: string): void {
  const engine = compiledScanner();
  const a = normalise(t);
  const b = engine.normaliseInModule(t);
  if (a.text !== b.text || String(a.starts) !== String(b.starts) || String(a.ends) !== String(b.ends)) {
    expect(b.text, `normalised: ${label}`).to.equal(a.text);
    expect(String(b.starts), `starts: ${label}`).to.equal(String(a.starts));
    expect(String(b.ends), `ends: ${label}`).to.equal(String(a.ends));
  }
  if (a.ends) for (let k = 0; k < a.ends.length; k++) if (a.ends[k]! > t.length) expect.fail(`normalised unit ${k} maps past the text's end: ${label}`);
  for (const text of [t, a.text]) {
    const s = engine.searchInModule(text);
    expect(s.keywordStarts, `keyword starts: ${label}`).to.deep.equal(keywordStarts(text));
    expect([...s.lacedCandidates], `laced candidates: ${label}`).to.deep.equal(lacedCandidates(text));
    expect([...s.anchors], `anchors: ${label}`).to.deep.equal(anchorStarts(text));
    const ts: number[] = [];
    scanRuns(text, true, true, true, (kind, start, end) => ts.push(kind, start, end));
    expect([...engine.runsInModule(text, true, true, true)], `encoded runs: ${label}`).to.deep.equal(ts);
  }
  const texts = [{ text: a.text }, { text: t }];
  const ws = new WordStream();
  fillStream(ws, texts);
  const wasm = new WordStream();
  engine.readWords(wasm, texts, {});
  expect(wasm.count, `word count: ${label}`).to.equal(ws.count);
  for (let w = 0; w < ws.count; w++) {
    if (wasm.hash[w] !== ws.hash[w] || wasm.start[w] !== ws.start[w] || wasm.length[w] !== ws.length[w] || wasm.word(w) !== ws.word(w))
      expect([wasm.hash[w], wasm.start[w], wasm.length[w], wasm.word(w)], `word ${w}: ${label}`).to.deep.equal([
        ws.hash[w],
        ws.start[w],
        ws.length[w],
        ws.word(w),
      ]);
  }
  wasm.reset();
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('guard: the two engines agree on surrogates, cuts inside pairs and grown or renewed memory (seeded fuzz)', function () {
  this.timeout(600_000);

  it(`${ROUNDS} rounds of random astral texts cut into messages, alone and between inputs that grow the memory past its bound`, async () => {
    const g = generator(SEED);
    let grown = 0;
    let renewed = 0;
    let insidePairs = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // Every 100th round: an input that takes the memory past RETAINED_MEMORY, then this round's texts in
      // the grown memory (the fresh instance comes at the next turn of the event loop).
      if (round % 100 === 50) {
        const big = g.text(400_000 + g.int(200_000));
        sameFindings(chat(big), `large input, round ${round}`);
        if (compiledScanner().memoryBytes() > RETAINED_MEMORY) grown++;
      }
      const t = g.text(20 + g.int(g.r() < 0.2 ? 3000 : 400));
      const at = g.cuts(t);
      for (const c of at) if (t.charCodeAt(c - 1) >= 0xd800 && t.charCodeAt(c - 1) <= 0xdbff) insidePairs++;
      const ps = parts(t, at);
      const label = `round ${round}, cuts ${at.join(',')}`;
      sameFindings(chat(t), `whole, ${label}`);
      sameFindings(chat(...ps), `split, ${label}`);
      for (const p of ps) samePasses(p, `part of ${label}`);
      samePasses(t, `whole, ${label}`);
      if (round % 100 === 50) {
        const before = compiledScanner().memoryBytes();
        await nextTurn();
        if (before > RETAINED_MEMORY && compiledScanner().memoryBytes() <= RETAINED_MEMORY) renewed++;
      }
    }
    console.log(`      ${ROUNDS} rounds, ${insidePairs} cuts inside a pair, memory grown past the bound ${grown} times, renewed ${renewed} times`);
    expect(insidePairs).to.be.greaterThan(ROUNDS / 2);
    expect(grown).to.equal(ROUNDS / 100);
    expect(renewed).to.equal(ROUNDS / 100);
  });
});
