/**
 * The compiled scanner (src/guard/compiled.ts, a Rust crate compiled to WebAssembly) against the TypeScript
 * scanner it replaces, which stays the reference: over the whole guard corpus (every file under
 * test/fixtures/guard, whole, by line and in multi-message requests), the evasion corpus (every secret
 * sample under every evasion, encoding, separator, confusable and disguise of test/guard/helpers) and a
 * seeded fuzzed corpus (random Unicode with confusables, invisibles, separators, lone surrogates, case
 * mappings that change length, partial, laced and encoded keys, the rules' own terms disguised, very long
 * runs, more distinct astral characters than a fold cache keeps), both engines must give identical
 * findings (rule, action, detector, place, via) and identical redactions (so identical offsets), and the
 * passes the module runs must agree unit for unit: the normalised text and its map back to the original,
 * where the key-like words start, where laced keys may start, where keys split by syntax may be joined (also
 * over texts of join syntax at random), whether a text holds an HTML reference (also over references and near
 * misses at random), where a headerless key body may start (also over DER starts at random), every word of the word stream, and the
 * block rules' explicit terms read squeezed (every hit, in order), also over a corpus of those terms
 * disguised (test/guard/helpers/evasions.ts TERM_DISGUISES, EXPLICIT_TERMS) and mixed at random; and the
 * intent word scorer: every text's distinct features in order and its class sums to the bit.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, gzipSync } from 'node:zlib';
import { compiledScanner } from '../../src/guard/compiled.js';
import { compileGuardrails, loadGuardrailsDoc, normalise, type ChatLike, type GuardrailsDoc } from '../../src/guard/index.js';
import { keywordStarts } from '../../src/guard/generic.js';
import { lacedCandidates } from '../../src/guard/laced.js';
import { awsSecretStarts, csvHeader, hintedLines, iniSection } from '../../src/guard/credentials.js';
import { anchorStarts } from '../../src/guard/secrets.js';
import { joinMatches } from '../../src/guard/joins.js';
import { holdsHtmlRef } from '../../src/guard/decoders.js';
import { derStarts } from '../../src/guard/private-key.js';
import { BASE64_RUN, base64Readings, HEX_RUN, hexReadings, scanRuns } from '../../src/guard/encodings.js';
import { stitchedSearch, type Part } from '../../src/guard/boundaries.js';
import { fillStream, LexicalMatcher } from '../../src/guard/lexical.js';
import { WordStream } from '../../src/guard/words.js';
import { IntentScorer, intentWords, MAX_SCORED_WORDS, type IntentModelDoc } from '../../src/guard/intent.js';
import {
  AWS_FORMS,
  BLANKS,
  CONFUSABLES,
  EVERY_KIND,
  EXPLICIT_TERMS,
  genericSamples,
  MORE_ENCODINGS,
  NOT_EXPLICIT_TERMS,
  PEM_DISGUISES,
  providerSamples,
  SEPARATORS,
  TERM_DISGUISES,
} from './helpers/evasions.js';
import { FIXTURES_DIR, RULES_DIR } from './helpers/guardrails.js';
import { ENCODINGS, EVASIONS, rng, secretSamples } from './helpers/secrets.js';
import { LOOKALIKES, shapeVariants } from './helpers/shapes.js';

const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
const reference = compileGuardrails(doc, { engine: 'typescript' });
const compiled = compileGuardrails(doc);
// The rules file's term lists as the runtime compiles them: the lexical detectors (their block rules' `any`
// terms also read squeezed), and the intent topics.
const lexical = new LexicalMatcher(
  doc.rules.flatMap((r) =>
    r.detectors.flatMap((d) => (d.kind === 'lexical' ? [{ rule: r.id, action: r.action, id: d.id, any: d.any ?? [], near: d.near ?? [] }] : [])),
  ),
);
const topics = new LexicalMatcher(
  doc.rules.flatMap((r) => r.detectors.flatMap((d) => (d.kind === 'intent' ? [{ rule: r.id, action: r.action, id: d.id, any: d.topics, near: [] }] : []))),
  { squeeze: false },
);

// ---- the corpora ------------------------------------------------------------------------------------

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? files(path) : [path];
    });
}

/** Every file of the guard corpus: whole, and each non-empty line. */
function guardCorpus(): { wholes: string[]; lines: string[] } {
  const wholes = files(FIXTURES_DIR).map((f) => readFileSync(f, 'utf8'));
  const lines = [...new Set(wholes.flatMap((w) => w.split('\n')).filter((l) => l.trim() !== ''))];
  return { wholes, lines };
}

/** Every secret sample under every evasion the guard's own tests use. */
function evasionCorpus(): string[] {
  const out: string[] = [];
  const samples = [...secretSamples(), ...providerSamples()];
  const disguises = { ...EVASIONS, ...ENCODINGS, ...SEPARATORS, ...BLANKS, ...EVERY_KIND, ...CONFUSABLES, ...MORE_ENCODINGS };
  for (const s of samples) {
    out.push(s.value, `the key is ${s.value} - keep it safe`);
    for (const f of Object.values(disguises)) out.push(f(s.value), `value: ${f(s.value)}\n`);
    if (s.kind === 'aws-access-key-id') for (const f of Object.values(AWS_FORMS)) out.push(f(s.value));
    if (s.kind === 'private-key') for (const f of Object.values(PEM_DISGUISES)) out.push(f(s.value));
  }
  for (const g of genericSamples()) out.push(g.text);
  for (const v of shapeVariants()) out.push(v.text);
  out.push(...LOOKALIKES);
  return out;
}

/** The terms the rules file matches (lexical terms, near sets, intent topics). */
function ruleTerms(d: GuardrailsDoc): string[] {
  const terms: string[] = [];
  for (const rule of d.rules) {
    for (const det of rule.detectors as unknown as Array<Record<string, unknown>>) {
      for (const t of (det.any as string[] | undefined) ?? []) terms.push(t);
      for (const t of (det.topics as string[] | undefined) ?? []) terms.push(t);
      for (const g of (det.near as Array<{ sets: Record<string, string[]> }> | undefined) ?? []) for (const set of Object.values(g.sets)) terms.push(...set);
    }
  }
  return terms.map((t) => t.replace(/\*$/, 'ing'));
}

/** Seeded random texts built from the pieces evasions are made of. */
function fuzzCorpus(count: number, seed: number, keys: readonly string[], terms: readonly string[]): string[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (n: number) => Math.floor(r() * n);
  const invisibles = ['\u200b', '\u200c', '\u200d', '\u2060', '\u00ad', '\ufeff', '\u202e', '\ufe0f', '\u{e0041}', '\u0000', '\u0007', '\u007f'];
  const confusables = ['а', 'е', 'о', 'р', 'с', 'ѕ', 'к', 'І', 'Α', 'Κ', 'ο', 'ν', 'ｓ', 'ｋ', '－', '‐', '−', '𝐀', '𝐬', 'ﬁ', 'ﷺ', 'é', 'ñ', 'ß'];
  const lengthChanging = ['İ', 'Σ', 'ΑΣ', 'ΑΣ ', 'ǅ', 'ẞ', 'ﬃ', 'ŉ'];
  const separators = [' ', '  ', '\n', '\t', '-', '_', '.', '*', '`', '|', '<br>', '\\n', ',', ';', ':', '"', "'", '@', '$', '’', '/', '+', '='];
  // Line breaks written out in more forms and cases: the separator reading takes `<BR>` and `<br />`, the
  // anchor reading only a lower-case `<br>`.
  separators.push('<BR>', '<br />', '<Br/>', '\\r', '\\t');
  const scripts = [0x41, 0x61, 0xc0, 0x391, 0x410, 0x5d0, 0x627, 0x905, 0x3041, 0x4e00, 0xac00, 0x1f600, 0xd800, 0xdc00, 0x2000, 0xff10];
  const randomChar = () => {
    const base = pick(scripts);
    const cp = base + int(base === 0xd800 || base === 0xdc00 ? 0x400 : 96);
    return cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp);
  };
  const leet = (s: string) =>
    s.replace(/[aeiost]/g, (c) => (r() < 0.5 ? ({ a: '4', e: '3', i: '1', o: '0', s: '5', t: '7' } as Record<string, string>)[c]! : c));
  const pieces: Array<() => string> = [
    () => pick(invisibles),
    () => pick(confusables),
    () => pick(lengthChanging),
    () => pick(separators),
    () => randomChar(),
    () => pick(terms),
    () => leet(pick(terms)),
    () => [...pick(terms)].join(pick([' ', '.', '-', '  ', ', '])),
    // Every word of a (multi-word) term spelled out in one run: the letters join into one word.
    () => [...pick(terms).replace(/ /g, '')].join(pick([' ', '.', '-'])),
    () => pick(terms).toUpperCase(),
    () => pick(keys),
    () => pick(keys).slice(0, 3 + int(20)),
    () => {
      const k = pick(keys);
      const cut = int(k.length);
      return k.slice(0, cut) + pick(separators) + k.slice(cut);
    },
    () => Buffer.from(pick(keys)).toString(pick(['base64', 'hex', 'base64url'] as const)),
    () => {
      // A key laced with separators: pieces of 1 to 8 characters, groups of 1 to 5 separator units between.
      const k = pick(keys);
      let out = '';
      for (let i = 0; i < k.length;) {
        const len = 1 + int(8);
        out += k.slice(i, i + len);
        i += len;
        for (let g = 1 + int(5); g > 0; g--) out += pick(separators);
      }
      return out;
    },
    () => pick(['the ', 'a ', 'key ', 'token: ', 'api_key=', 'password ', 'begin ', 'BEGIN ', '-----', 'sk-', 'AKIA', "don't ", 's@rin ', 'x ', 'I ', '123 ']),
  ];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let s = '';
    const n = 1 + int(40);
    for (let k = 0; k < n; k++) s += pick(pieces)();
    out.push(s);
  }
  // Very long runs: one character, one word, spelled-out letters, a base64 run, mixed scripts.
  out.push('a'.repeat(70_000), 's a r i n '.repeat(5000), 'é'.repeat(40_000), 'ѕk-'.repeat(10_000), Buffer.from('x'.repeat(60_000)).toString('base64'));
  out.push(Array.from({ length: 30_000 }, () => randomChar()).join(''), Array.from({ length: 20_000 }, () => pick(pieces)()).join(''));
  // More distinct astral code points than either engine keeps folds of, then some of them again.
  const astral = Array.from({ length: 70_000 }, (_, i) => String.fromCodePoint(0x20000 + i)).join('');
  out.push(astral + astral.slice(0, 2000) + astral.slice(-2000));
  return out;
}

/**
 * The block rules' explicit terms read squeezed: every term under every disguise, the attack's own texts,
 * and seeded mixes - a term's letters with random symbols, digraphs, separators and invisibles between and
 * for them, after and before a word or not, beside the ordinary word that holds a term.
 */
function squeezedCorpus(d: GuardrailsDoc, count: number, seed: number): string[] {
  const terms = d.rules.filter((r) => r.action === 'block').flatMap((r) => r.detectors.flatMap((det) => (det.kind === 'lexical' ? (det.any ?? []) : [])));
  const out = [...EXPLICIT_TERMS, ...NOT_EXPLICIT_TERMS];
  for (const t of terms) for (const disguise of Object.values(TERM_DISGUISES)) out.push(disguise(t.replace(/\*$/, '')), disguise(t));
  // Two terms in one text, one read only with the symbols (`!` for `i`, `()` for `o`), the other only with
  // them squeezed out (a `!` inside it): both readings' hits in one text, in the order the reference gives.
  const symbolsOnly = (t: string) => t.replace('i', '!').replace('o', '()');
  const plainOnly = (t: string) => `${t.slice(0, 2)}!${t.slice(2)}`;
  const bare = terms.map((t) => t.replace(/\*$/, ''));
  bare.forEach((a, k) => {
    const b = bare[(k + 1) % bare.length]!;
    out.push(`${symbolsOnly(a)} and ${plainOnly(b)}`, `${plainOnly(b)}, then ${symbolsOnly(a)}`);
  });
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const letters: Record<string, string[]> = {
    i: ['i', 'I', 'l', '1', '!', '|', '¡', 'ł'],
    l: ['l', 'L', '1', '|', 'ł', '!'],
    o: ['o', 'O', '0', '@', '°', '()', '[]', '{}', 'ø', 'a', '4'],
    a: ['a', '4', '@', 'o', '()'],
    c: ['c', 'C', '(', '<', 'ç'],
    h: ['h', '#', '|-|', 'ħ'],
    n: ['n', '|\\|', 'ñ'],
    s: ['s', '5', '$'],
    e: ['e', '3', 'é'],
    t: ['t', '7', 'ŧ'],
    d: ['d', 'đ'],
  };
  const between = [
    '',
    '',
    '',
    ' ',
    '\n',
    '\t',
    '/',
    ',',
    ', ',
    ';',
    ':',
    '|',
    '+',
    '~',
    '-',
    '_',
    '.',
    '*',
    '\u2800',
    '\u200b',
    '(',
    ')',
    '[',
    ']',
    '|-',
    '|\\',
    '<b>',
    '&#99;',
    '%20',
    'x',
  ];
  const around = ['', '', ' ', 'torpedo', 'the ', '#', '(', '|', '!', '1', 'x', 'materiale ', 'é', '𝐬', 'ΑΣ'];
  const after = ['', '', ' ', 'x', 'ografico', 's', '1', '!', '|', '()', ' links', 'graphy', 'é'];
  for (let k = 0; k < count; k++) {
    const term = pick(terms).replace(/\*$/, '');
    let s = pick(around);
    for (const ch of term)
      s += (ch === ' ' ? pick(['', ' ', '-', '_']) : r() < 0.3 && letters[ch] ? pick(letters[ch]) : r() < 0.2 ? ch.toUpperCase() : ch) + pick(between);
    s += pick(after);
    out.push(r() < 0.3 ? `${pick(around)}${s} ${pick(around)}${s}` : s);
  }
  return out;
}

// ---- comparing ----------------------------------------------------------------------------------------

const chat = (...contents: string[]): ChatLike => ({
  messages: contents.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content })),
});

/** Both engines' findings and redactions for `req`: equal, or the first difference. */
function sameFindings(req: ChatLike, label: string): void {
  expect(compiled.scan(req), `scan: ${label}`).to.deep.equal(reference.scan(req));
  expect(compiled.redact(req), `redact: ${label}`).to.deep.equal(reference.redact(req));
}

/**
 * The intent word scorer (intent.ts `IntentScorer`) against the module's (compiled.ts `intentSums`,
 * scanner/src/scorer.rs) on `text` as the first pass reads it (normalised): the same distinct features in
 * the same order, the same class sums to the bit, and the same probabilities. Returns how many of the
 * text's words read as a concept (whole word, or by a prefix) in the reference.
 */
function sameScore(scorer: IntentScorer, text: string, label: string): { words: number; concepts: number } {
  const engine = compiledScanner();
  const words = intentWords(text);
  const features = scorer.features(words);
  const sums = scorer.sums(features);
  const module = engine.intentSums(scorer, text);
  const moduleFeatures = engine.intentFeatures(module.features);
  if (module.features !== features.length || features.some((f, k) => f !== moduleFeatures[k]))
    expect([...moduleFeatures], `intent features (${features.length}): ${label}`).to.deep.equal([...features]);
  if (sums.some((z, c) => !Object.is(z, module.sums[c]))) expect([...module.sums], `intent sums: ${label}`).to.deep.equal([...sums]);
  expect([...engine.intentScore(scorer, text)], `intent probabilities: ${label}`).to.deep.equal([...scorer.score(words)]);
  const read = scorer.concepts.read(words);
  return { words: words.length, concepts: read.filter((c, k) => c !== words[k]).length };
}

/**
 * Texts made of the pieces joins.ts' expressions read, at random: every join form, quotes and backticks,
 * runs of spaces and tabs on both sides of each quantifier's bound (4, 8, 32), line breaks (`\n`, `\r\n`,
 * a lone `\r`), interpolations of 23 to 25 units, key pieces and units of other planes.
 */
function joinTexts(count: number, seed: number): string[] {
  const r = rng(seed);
  const pieces = [
    '"',
    "'",
    '`',
    '""',
    "''",
    '``',
    ' ',
    '\t',
    ' \t',
    '\n',
    '\r\n',
    '\r',
    '+',
    '++',
    '.',
    '..',
    '||',
    '|',
    '&',
    '<>',
    '<',
    '>',
    '~',
    ')',
    '.concat(',
    '.concat',
    '${',
    '}',
    '{',
    '$',
    '\\',
    '^',
    '-',
    'abc',
    'sk-proj-',
    'AKIA',
    'Ab3dEf5h9',
    'x',
    'é',
    '\u2028',
    '\ud83d\ude00',
    ...[3, 4, 5, 7, 8, 9, 31, 32, 33].map((n) => ' '.repeat(n)),
    ...[23, 24, 25].map((n) => 'q'.repeat(n)),
  ];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let s = '';
    const n = 1 + Math.floor(r() * 40);
    for (let k = 0; k < n; k++) s += pieces[Math.floor(r() * pieces.length)];
    out.push(s);
  }
  return out;
}

/** The encoded runs (kind, start, end) the module finds in `text`, against encodings.ts scanRuns, for each decoder set. */
function sameRuns(text: string, label: string): void {
  const engine = compiledScanner();
  for (const [base64, hex, base32] of [
    [true, true, true],
    [true, false, false],
    [false, true, false],
    [false, false, true],
  ] as const) {
    const ts: number[] = [];
    scanRuns(text, base64, hex, base32, (kind, start, end) => ts.push(kind, start, end));
    const wasm = engine.runsInModule(text, base64, hex, base32);
    if (wasm.length !== ts.length || wasm.some((x, k) => x !== ts[k]))
      expect(Array.from(wasm), `encoded runs (base64 ${base64}, hex ${hex}, base32 ${base32}): ${label}`).to.deep.equal(ts);
    // Which readings of each base64 and hex run decode to something: the module says it so that TypeScript decodes only those.
    const masks = engine.runMasksInModule(text, base64, hex, base32);
    const want = ts
      .filter((_, k) => k % 3 === 0)
      .map((kind, r) => {
        const [start, end] = [ts[3 * r + 1]!, ts[3 * r + 2]!];
        return kind === BASE64_RUN ? base64Readings(text, start, end) : kind === HEX_RUN ? hexReadings(text.slice(start, end)) : -1;
      });
    if (masks.length !== want.length || masks.some((x, k) => x !== want[k]))
      expect(Array.from(masks), `base64 readings (base64 ${base64}, hex ${hex}, base32 ${base32}): ${label}`).to.deep.equal(want);
  }
}

/** The module's passes against the TypeScript ones, unit for unit. */
function samePasses(text: string, label: string): void {
  const engine = compiledScanner();
  const a = normalise(text);
  const b = engine.normaliseInModule(text);
  expect(b.text, `normalised text: ${label}`).to.equal(a.text);
  expect(b.starts && [...b.starts], `starts: ${label}`).to.deep.equal(a.starts && [...a.starts]);
  expect(b.ends && [...b.ends], `ends: ${label}`).to.deep.equal(a.ends && [...a.ends]);
  for (const [t, which] of [
    [a.text, 'normalised'],
    [text, 'as written'],
  ] as const) {
    const { keywordStarts: starts, lacedCandidates: laced, anchors, joins, htmlRef, ders } = engine.searchInModule(t);
    expect([...ders], `headerless key starts (${which}): ${label}`).to.deep.equal(derStarts(t));
    expect(htmlRef, `holds an HTML reference (${which}): ${label}`).to.equal(holdsHtmlRef(t));
    expect(starts, `keyword starts (${which}): ${label}`).to.deep.equal(keywordStarts(t));
    expect(joins && [...joins], `joins (${which}): ${label}`).to.deep.equal(joinMatches(t));
    expect([...laced], `laced candidates (${which}): ${label}`).to.deep.equal(lacedCandidates(t));
    expect([...anchors], `direct-shape anchors (${which}): ${label}`).to.deep.equal(anchorStarts(t));
    sameRuns(t, `${which}: ${label}`);
  }
  const texts = [{ text: a.text }, { text }];
  const ts = new WordStream();
  fillStream(ts, texts);
  const wasm = new WordStream();
  const found = engine.readWords(wasm, texts, { lexical, topics, squeezed: lexical.squeezed });
  expect(wasm.count, `word count: ${label}`).to.equal(ts.count);
  for (let w = 0; w < ts.count; w++) {
    const same =
      wasm.hash[w] === ts.hash[w] &&
      wasm.prefix[w] === ts.prefix[w] &&
      wasm.length[w] === ts.length[w] &&
      wasm.text[w] === ts.text[w] &&
      wasm.start[w] === ts.start[w] &&
      wasm.word(w) === ts.word(w);
    if (!same) {
      const row = (s: WordStream) => [s.hash[w], s.prefix[w], s.length[w], s.text[w], s.start[w], s.word(w)];
      expect(row(wasm), `word ${w}: ${label}`).to.deep.equal(row(ts));
    }
  }
  // Both term lists matched in the module in one pass: the same hits (term, first word, last word) in the
  // same order as the reference's walk; and the squeezed reading's.
  const same = (a: Int32Array | undefined, b: number[], what: string) => {
    if (!a || a.length !== b.length || a.some((x, k) => x !== b[k])) expect(a && [...a], `${what}: ${label}`).to.deep.equal(b);
  };
  same(found.lexical, lexical.hits(ts), 'lexical hits');
  same(found.topics, topics.hits(ts), 'topic hits');
  sameSqueezed(texts, found.squeezed!, label);
  wasm.reset();
}

/**
 * The squeezed reading's hits (term, text) in `texts` from the module (compiled.ts readWords, which reads
 * them in the copy it cuts words from), against squeezed.ts, in the same order.
 */
function sameSqueezed(texts: ReadonlyArray<{ text: string }>, hits: Int32Array, label: string): number {
  const ts = lexical.squeezed.hits(texts);
  const module = [...hits];
  if (module.length !== ts.length || module.some((x, k) => x !== ts[k])) expect(module, `squeezed hits: ${label}`).to.deep.equal(ts);
  return ts.length / 2;
}

/**
 * The boundary pass's search of texts joined (boundaries.ts stitchedSearch: the texts' own searches and the
 * stretches around the cuts searched again) against the reference searches of the joined text, for the whole
 * of it and for a stretch that starts and ends inside texts.
 */
function sameStitched(texts: readonly string[], label: string): void {
  const engine = compiledScanner();
  const joined = texts.join('');
  const own = texts.map((t) => engine.search(t));
  for (const [from, to] of [
    [0, joined.length],
    [Math.floor(joined.length / 3), Math.floor((2 * joined.length) / 3)],
  ] as const) {
    const region = joined.slice(from, to);
    const parts: Part[] = [];
    let off = 0;
    texts.forEach((text, i) => {
      const at = Math.max(off, from);
      const end = Math.min(off + text.length, to);
      if (at < end) parts.push({ at: at - from, text, from: at - off, to: end - off, searched: own[i] });
      off += text.length;
    });
    const s = stitchedSearch(region, parts, (w) => engine.search(w));
    expect(s.keywordStarts, `stitched keyword starts [${from}, ${to}): ${label}`).to.deep.equal(keywordStarts(region));
    expect(Array.from(s.lacedCandidates), `stitched laced candidates [${from}, ${to}): ${label}`).to.deep.equal(lacedCandidates(region));
    expect(Array.from(s.anchors!), `stitched anchors [${from}, ${to}): ${label}`).to.deep.equal(anchorStarts(region));
    expect(s.htmlRef, `stitched HTML reference [${from}, ${to}): ${label}`).to.equal(holdsHtmlRef(region));
    expect(Array.from(s.ders!), `stitched headerless key starts [${from}, ${to}): ${label}`).to.deep.equal(derStarts(region));
  }
}

/** RFC 4648 base32 of `s` (upper case, no padding). */
function base32Of(s: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of Buffer.from(s)) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

const short = (s: string) => JSON.stringify(s.length > 60 ? s.slice(0, 60) + '...' : s);

describe('guard: the compiled scanner gives the reference scanner findings', function () {
  this.timeout(600_000);
  const { wholes, lines } = guardCorpus();
  const evasions = evasionCorpus();
  const keys = [...secretSamples(), ...providerSamples()].map((s) => s.value);
  const fuzz = fuzzCorpus(1500, 20261127, keys, ruleTerms(doc));

  it('reads corpora of a useful size', () => {
    const chars = (xs: readonly string[]) => xs.reduce((n, x) => n + x.length, 0);
    console.log(
      `      guard corpus ${wholes.length} files (${chars(wholes)} chars), ${lines.length} lines; evasions ${evasions.length} texts (${chars(evasions)} chars); fuzzed ${fuzz.length} texts (${chars(fuzz)} chars)`,
    );
    expect(wholes.length).to.be.at.least(25);
    expect(lines.length).to.be.greaterThan(3000);
    expect(evasions.length).to.be.greaterThan(1000);
    expect(fuzz.length).to.be.greaterThan(1500);
  });

  it('the guard corpus: every file whole, every line, files cut into messages of 7 lines', () => {
    for (const w of wholes) sameFindings(chat(w), short(w));
    for (const l of lines) sameFindings(chat(l), short(l));
    for (const w of wholes) {
      const all = w.split('\n');
      const parts: string[] = [];
      for (let i = 0; i < all.length; i += 7) parts.push(all.slice(i, i + 7).join('\n') + '\n');
      sameFindings(chat(...parts.slice(0, 200)), `cut: ${short(w)}`);
    }
  });

  it('the evasion corpus: every sample under every disguise, alone and split across two messages', () => {
    for (const e of evasions) {
      sameFindings(chat(e), short(e));
      const cut = Math.floor(e.length / 2);
      sameFindings(chat(e.slice(0, cut), e.slice(cut)), `split: ${short(e)}`);
    }
  });

  it('long requests of all three corpora in prose that says "begin", cut into messages at random', () => {
    // Regions of the boundary pass longer than the texts above: the joined texts read whole (the word `begin`)
    // from the stitched search, around cuts that fall anywhere.
    const r = rng(20261128);
    const pool = [...evasions, ...fuzz, ...lines];
    for (let round = 0; round < 24; round++) {
      let text = '';
      while (text.length < 60_000)
        text += (r() < 0.3 ? ' Before we begin, the BEGIN marker. ' : ' ') + pool[Math.floor(r() * pool.length)]! + (r() < 0.5 ? '\n' : ' ');
      const parts: string[] = [];
      for (let i = 0; i < text.length;) {
        const length = 300 + Math.floor(r() * 5000);
        parts.push(text.slice(i, i + length));
        i += length;
      }
      sameFindings(chat(...parts), `round ${round}`);
    }
  });

  it('laced keys and the fuzzed corpus cut across messages of long requests that say "begin" (the joined request reuses its texts\' laced readings)', () => {
    // The boundary pass's joined request (16 KiB or more: read from its texts' own searches) takes each laced
    // reading its texts made where the text holds every unit the reading looked at (laced.ts LacedReading
    // `reach`); a reading that ran to its text's end is made again in the joined request, where the text goes on.
    const r = rng(20261129);
    const filler = (n: number) => 'Before we begin, the BEGIN marker and the review. '.repeat(Math.ceil(n / 50)).slice(0, n);
    const SEPARATORS = [' ', ' | ', '\n', '<br>', '\\n', '" "', '-', '**', ' > '];
    const lace = (key: string) => {
      const sep = SEPARATORS[Math.floor(r() * SEPARATORS.length)]!;
      const pieces: string[] = [];
      for (let i = 0; i < key.length;) {
        const n = 2 + Math.floor(r() * 5);
        pieces.push(key.slice(i, i + n));
        i += n;
      }
      return pieces.join(sep);
    };
    let laced = 0;
    for (const key of keys) {
      const text = lace(key);
      for (const k of [1, Math.floor(text.length / 3), Math.floor(text.length / 2), text.length - 1]) {
        const req = chat(filler(9000), filler(9000) + ' see ' + text.slice(0, k), text.slice(k) + ' here ' + filler(9000));
        sameFindings(req, `laced ${short(text)} cut at ${k}`);
        if (compiled.scan(req).findings.some((f) => f.via === 'split')) laced++;
      }
    }
    // The cases must hold what is compared: laced keys found across the cut (92 of the 160 requests). A
    // reading kept, and reused, although it ran to its text's end, fails them; so does a reach without LOOKAHEAD.
    expect(laced).to.be.greaterThan(keys.length);
    for (let i = 0; i < fuzz.length; i += 8) {
      const parts = [filler(17_000)];
      for (const f of fuzz.slice(i, i + 8)) {
        const cut = Math.floor(r() * (f.length + 1));
        parts[parts.length - 1] += ' ' + f.slice(0, cut);
        parts.push(f.slice(cut) + ' ' + filler(40));
      }
      sameFindings(chat(...parts), `fuzzed ${i}..${i + 7} cut in long prose`);
    }
  });

  it('the fuzzed corpus: alone, and as neighbouring messages', () => {
    for (const f of fuzz) sameFindings(chat(f), short(f));
    for (let i = 0; i + 3 <= fuzz.length; i += 3) sameFindings(chat(fuzz[i]!, fuzz[i + 1]!, fuzz[i + 2]!), `messages ${i}..${i + 2}`);
  });

  it("matches the rules file's term lists alike (lexical detectors and intent topics: whole-word, prefix, multi-word and spelled-out terms)", () => {
    // The corpora the unit-for-unit test below reads must exercise what it compares: hits of both matchers,
    // prefix terms, multi-word terms and spelled-out words.
    const ws = new WordStream();
    let lexicalHits = 0;
    let topicHits = 0;
    for (const t of [...wholes, ...evasions, ...fuzz]) {
      fillStream(ws, [{ text: normalise(t).text }]);
      lexicalHits += lexical.hits(ws).length / 3;
      topicHits += topics.hits(ws).length / 3;
      ws.reset();
    }
    expect(lexicalHits).to.be.greaterThan(100);
    expect(topicHits).to.be.greaterThan(100);
    expect(lexical.terms.some((t) => t.prefixLast)).to.equal(true);
    expect(lexical.terms.some((t) => t.words.length > 1)).to.equal(true);
    const req = chat('how to make s a r i n gas at home', 'and c h i l d p o r n');
    expect(compiled.scan(req)).to.deep.equal(reference.scan(req));
    expect(compiled.scan(req).findings.length).to.be.greaterThan(0);
  });

  it("reads the block rules' explicit terms squeezed alike: every term under every disguise, the attack's texts, seeded mixes", () => {
    const texts = squeezedCorpus(doc, 2000, 20261128);
    // The corpus must exercise what is compared: hits, and texts with none.
    let hits = 0;
    let none = 0;
    const ws = new WordStream();
    const engine = compiledScanner();
    for (const t of texts) {
      const one = [{ text: normalise(t).text }];
      const n = sameSqueezed(one, engine.readWords(ws, one, { squeezed: lexical.squeezed }).squeezed!, short(t));
      ws.reset();
      hits += n;
      if (n === 0) none++;
      sameFindings(chat(t), short(t));
    }
    for (let i = 0; i + 2 <= texts.length; i += 2) sameFindings(chat(texts[i]!, texts[i + 1]!), `messages ${i}, ${i + 1}`);
    expect(hits).to.be.greaterThan(1000);
    expect(none).to.be.greaterThan(300);
    console.log(`      ${texts.length} texts, ${hits} hits, ${none} texts without one`);
  });

  it('normalises, finds key-like words, laced-key candidates and direct-shape anchors, splits words and matches the term lists unit for unit alike, on every text of the three corpora', () => {
    for (const t of [...wholes, ...lines, ...evasions, ...fuzz]) samePasses(t, short(t));
  });

  it('tells plain ASCII text from other text alike, with the odd unit at every place of a long text, and normalises it alike when it is not', () => {
    // The module reads eight units at a look (normalise.rs `plain_ascii`): each unit on either side of the
    // printable range, the line breaks and tab, and units of other planes, at every place of two looks and
    // of the last ones (the units past the last whole look are read one by one). Then the same in a text
    // that is not plain ASCII whatever the odd unit (a letter with an accent first, a curly quote last),
    // whose runs of plain units are copied eight units a look (normalise.rs `plain_run_end`).
    const plain = 'the quick brown fox reviews code: {a: 1, b: [2, 3]} ~ ok!\r\n'.repeat(6).slice(0, 301);
    const units = [0x00, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xa0, 0xff, 0x100, 0x200b, 0xd800, 0xdc00, 0xff21, 0xffff];
    const places = [...Array.from({ length: 18 }, (_, i) => i), ...Array.from({ length: 18 }, (_, i) => plain.length - 1 - i)];
    const engine = compiledScanner();
    let checked = 0;
    for (const [before, after] of [
      ['', ''],
      ['\u00e9', '\u2019'],
    ]) {
      for (const u of units) {
        for (const at of places) {
          const text = before + plain.slice(0, at) + String.fromCharCode(u) + plain.slice(at + 1) + after;
          const a = normalise(text);
          const b = engine.normaliseInModule(text);
          const label = `U+${u.toString(16).padStart(4, '0')} at ${at}${before ? ' (not plain ASCII)' : ''}`;
          expect(b.text, `normalised text: ${label}`).to.equal(a.text);
          expect(b.starts && [...b.starts], `starts: ${label}`).to.deep.equal(a.starts && [...a.starts]);
          expect(b.ends && [...b.ends], `ends: ${label}`).to.deep.equal(a.ends && [...a.ends]);
          checked++;
        }
      }
    }
    expect(checked).to.equal(2 * units.length * places.length);
  });

  it('finds the encoded runs alike in long encoded inputs: wrapped base64, byte lists, base32, runs glued to prose', () => {
    const r = rng(7);
    const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));
    const texts = [
      bytes(30_000).toString('base64'),
      bytes(30_000).toString('base64').replace(/.{76}/g, '$&\r\n'),
      bytes(30_000).toString('base64').replace(/.{64}/g, '$&\n'),
      bytes(20_000).toString('hex'),
      'de ad be ef '.repeat(4000),
      '0xde, 0xad, 0xbe, 0xef, '.repeat(3000),
      'de:ad:be:ef:'.repeat(3000),
      keys.map((k) => 'x' + Buffer.from(k).toString('base64') + '== and ' + Buffer.from(k).toString('hex') + ' then ').join(''),
      keys.map((k) => (base32Of(k) + '====== ').repeat(3)).join('\n'),
      keys.map((k) => [...Buffer.from(k)].map((b) => b.toString(16).padStart(2, '0')).join(' ') + '.\n').join(''),
      // Which readings of a base64 run decode to something: UTF-8 text (multi-byte too), compressed data, a
      // printable stretch of 19, 20 and 21 bytes in random ones, the URL-safe alphabet, runs cut anywhere.
      keys.map((k) => Buffer.from(`clé: ${k} — ключ ✓ 🔑`).toString('base64')).join(' '),
      keys.map((k) => gzipSync(k).toString('base64') + ' ' + deflateSync(k).toString('base64')).join('\n'),
      [19, 20, 21, 40].map((n) => Buffer.concat([bytes(13), Buffer.from('k'.repeat(n)), bytes(17)]).toString('base64')).join(' '),
      Array.from({ length: 400 }, (_, i) =>
        bytes(18 + (i % 40))
          .toString('base64url')
          .slice(0, 24 + (i % 37)),
      ).join(' '),
      Array.from({ length: 400 }, (_, i) =>
        Buffer.from(keys[i % keys.length]!)
          .toString('base64')
          .slice(i % 5),
      ).join('.'),
      keys.map((k) => 'a' + Buffer.from(`${k} — ключ`).toString('hex') + 'F ' + Buffer.from(k).toString('hex').toUpperCase()).join(' | '),
      [19, 20, 21].map((n) => Buffer.concat([bytes(5), Buffer.from('k'.repeat(n)), bytes(9)]).toString('hex')).join(' '),
    ];
    for (const t of texts) sameRuns(t, short(t));
    for (const t of texts) for (let cut = 1; cut < 200; cut += 37) sameRuns(t.slice(cut, cut + 5000), `slice ${cut}: ${short(t)}`);
  });

  it('finds the joins alike: every join form at random, around the bounds of its runs, alone and in keys split by it, in the search and read alone (in texts joined from several, too)', () => {
    const engine = compiledScanner();
    const texts = joinTexts(20_000, 11);
    let matched = 0;
    for (const t of texts) {
      const ts = joinMatches(t);
      const wasm = engine.searchInModule(t).joins;
      if (ts && ts.length > 0) matched++;
      expect(wasm && [...wasm], `joins: ${short(t)}`).to.deep.equal(ts);
      // Read alone (the boundary pass's joined request): from the text just searched, and written afresh.
      const alone = engine.joinsInModule(t);
      expect(alone && [...alone], `joins read alone: ${short(t)}`).to.deep.equal(ts);
      const copy = [...t].join('');
      const again = engine.joinsInModule(copy);
      expect(again && [...again], `joins read alone, a copy: ${short(t)}`).to.deep.equal(ts);
    }
    expect(matched).to.be.greaterThan(2000);
    // Several of those texts joined, as the boundary pass joins messages (each start unit at every offset modulo 8).
    const rj = rng(18);
    for (let i = 0; i < 3000; i++) {
      const parts = Array.from({ length: 2 + Math.floor(rj() * 6) }, () => texts[Math.floor(rj() * texts.length)]!);
      const t = 'x'.repeat(Math.floor(rj() * 9)) + parts.join(['\n', '', ' ', '\n\n'][i % 4]);
      const ts = joinMatches(t);
      const alone = engine.joinsInModule(t);
      expect(alone && [...alone], `joins read alone: ${short(t)}`).to.deep.equal(ts);
    }
    // The corpora, each text read alone.
    for (const t of [...wholes, ...lines, ...evasions, ...fuzz]) {
      const alone = engine.joinsInModule(t);
      expect(alone && [...alone], `joins read alone: ${short(t)}`).to.deep.equal(joinMatches(t));
    }
    // Keys split by those texts, in messages long enough for the module to read them.
    const r = rng(12);
    const prose = 'the build reads its settings from the environment and a file; ';
    for (let i = 0; i < 1500; i++) {
      const key = keys[i % keys.length]!;
      const cut = 1 + Math.floor(r() * (key.length - 1));
      const join = texts[i]!;
      const q = '"\'`'[i % 3]!;
      const text = `${prose.repeat(2)}const k = ${q}${key.slice(0, cut)}${q}${join}${q}${key.slice(cut)}${q};\n${join}${prose}`;
      sameFindings(chat(text), `split by ${short(join)}: ${short(text)}`);
    }
  });

  it('tells texts with an HTML character reference alike: references and near misses at random, around the bounds of their runs', () => {
    const engine = compiledScanner();
    const r = rng(13);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const runOf = (units: string, n: number) => Array.from({ length: n }, () => pick([...units])).join('');
    const lengths = [0, 1, 2, 5, 6, 7, 8, 30, 31, 32];
    const bodies = [
      () => '#' + runOf('0123456789', pick(lengths)),
      () => '#' + pick(['x', 'X']) + runOf('0123456789abcdefABCDEF', pick(lengths)),
      () => '#' + pick(['x', 'X', 'y']) + runOf('0123456789abcdefgxyz', pick(lengths)),
      () => runOf('aZq', 1) + runOf('abcXYZ019', pick(lengths)),
      () => runOf('0_é ', 1) + runOf('abc', pick(lengths)),
    ];
    let holding = 0;
    for (let i = 0; i < 20_000; i++) {
      let t = pick(['', 'a', '&', '&&', ' & ', 'x;']);
      const n = 1 + Math.floor(r() * 3);
      for (let k = 0; k < n; k++) t += pick(['&', '&', '&&', 'a&']) + pick(bodies)() + pick([';', ';', ';', '', ' ', '&', 'é;']);
      const ts = holdsHtmlRef(t);
      if (ts) holding++;
      expect(engine.searchInModule(t).htmlRef, `holds an HTML reference: ${short(t)}`).to.equal(ts);
      // Cut in two, alone and inside long texts the module reads: the boundary pass's stitched answer.
      if (i % 10 === 0) {
        const cut = Math.floor(r() * (t.length + 1));
        const pad = 'the build reads its settings from a file. '.repeat(4);
        sameStitched([t.slice(0, cut), t.slice(cut)], `cut at ${cut}: ${short(t)}`);
        sameStitched([pad + t.slice(0, cut), t.slice(cut) + pad, pad], `cut at ${cut}, padded: ${short(t)}`);
      }
    }
    expect(holding).to.be.greaterThan(5000);
    expect(holding).to.be.lessThan(15_000);
  });

  it('finds where a headerless key body may start alike: DER and OpenSSH starts and near misses at random, alone and cut in two', () => {
    const engine = compiledScanner();
    const r = rng(14);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const run = (n: number) => Array.from({ length: n }, () => pick([...b64])).join('');
    const heads = [
      'M',
      'MI',
      'MII',
      'MIG',
      'MIH',
      'MA',
      'MH',
      'MJ',
      'Mi',
      'b3',
      'b3BlbnNzaC1rZXktdjE',
      'b3BlbnNzaC1rZXktdj',
      'MIIEvQIBADANBgkqhkiG9w0BAQEFAASC',
    ];
    const between = ['', '', '=', ' ', '\n', '-', '.', 'é', '\u200b'];
    let found = 0;
    for (let i = 0; i < 10_000; i++) {
      let t = '';
      const n = 1 + Math.floor(r() * 5);
      for (let k = 0; k < n; k++) t += pick(between) + pick(heads) + run(pick([0, 1, 8, 9, 10, 11, 12, 40])) + pick(between);
      const ts = derStarts(t);
      found += ts.length;
      expect([...engine.searchInModule(t).ders], `headerless key starts: ${short(t)}`).to.deep.equal(ts);
      if (i % 10 === 0) {
        const cut = Math.floor(r() * (t.length + 1));
        const pad = 'the build reads its settings from a file. '.repeat(4);
        sameStitched([t.slice(0, cut), t.slice(cut)], `cut at ${cut}: ${short(t)}`);
        sameStitched([pad + t.slice(0, cut), t.slice(cut) + pad, pad], `cut at ${cut}, padded: ${short(t)}`);
      }
    }
    expect(found).to.be.greaterThan(5000);
  });

  it('finds AWS secret keys alike in the windows after what names AWS: runs of 38 to 42 units, `=` and run units beside them, windows cut inside a run, places that overlap, repeat or lie past the text; and on the three corpora', () => {
    const engine = compiledScanner();
    const r = rng(15);
    const int = (n: number) => Math.floor(r() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
    const classes = ['ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz', '0123456789', '/+'];
    // A run of the key's class: sometimes without one of upper case, lower case or digits (not a key).
    const run = (n: number) => {
      const use = r() < 0.7 ? classes : classes.filter((_, k) => k !== int(3));
      return Array.from({ length: n }, () => pick([...pick(use)])).join('');
    };
    const between = [' ', '\n', '=', '==', '"', ':', ',', '.', '-', '_', 'é', '\u200b', 'aws_secret_access_key = ', 'AKIAIOSFODNN7EXAMPLE ', 'x', '9', '/'];
    const sameAws = (t: string, context: number[], label: string): number => {
      const ts = awsSecretStarts(t, context);
      expect([...engine.awsSecretsInModule(t, context)], `AWS secret key starts: ${label}`).to.deep.equal(ts);
      return ts.length;
    };
    let found = 0;
    for (let i = 0; i < 4000; i++) {
      let t = '';
      const keys: number[] = [];
      for (let k = 1 + int(12); k > 0; k--) {
        t += pick(between);
        keys.push(t.length);
        t += run(pick([38, 39, 40, 40, 40, 41, 42, 80]));
        if (r() < 0.3) t += ' the key rotates every ninety days, '.repeat(int(20));
      }
      // Places before the keys, at distances that put a window's end before, inside and after a run.
      const context: number[] = [];
      for (let k = int(6); k >= 0; k--) {
        const key = pick(keys);
        context.push(Math.max(0, pick([key - 552 + int(45) - 2, key - int(600), key, key + int(40), t.length + int(3)])));
      }
      context.sort((a, b) => a - b);
      found += sameAws(t, context, short(t));
      // The text just searched is read from the input buffer as it stands; another string of the same units too.
      engine.searchInModule(t);
      sameAws(t, context, `after its search: ${short(t)}`);
      sameAws([...t].join(''), context, `a copy: ${short(t)}`);
    }
    expect(found).to.be.greaterThan(2000);
    // The corpora, with a place after every word that names AWS or a secret, and one at random.
    for (const t of [...lines, ...evasions, ...fuzz]) {
      const context = [...t.matchAll(/aws|secret|akia/gi)].map((m) => m.index + m[0].length);
      context.push(int(t.length + 1));
      context.sort((a, b) => a - b);
      found += sameAws(t, context, short(t));
    }
  });

  it('tells texts with an INI section line alike: names of 0 to 66 units of the class and near misses, blanks, `\\r` and other units after the `]`, every line end, nested and repeated brackets; and on the three corpora', () => {
    const engine = compiledScanner();
    const r = rng(16);
    const int = (n: number) => Math.floor(r() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
    const name = 'ABCXYZabcxyz0189 _.:-';
    // Around the `]`: the line may end (every terminator `$` knows, the text's end) or not.
    const after = ['', '\n', '\r', '\r\n', '\u2028', '\u2029', ' ', '\t', ' \t ', ' \r', '\t\n', 'x', ' x', '\r x', '\u0085', ']', '[', '\v', '\f', '\u00a0'];
    const before = ['', '\n', 'x', ' ', '[', '[[', ']', 'key = value\n', '\r'];
    const section = () => {
      const n = pick([0, 1, 2, 63, 64, 64, 65, 66, int(70)]);
      let body = Array.from({ length: n }, () => pick([...name])).join('');
      // A unit outside the class somewhere in the name (a near miss), sometimes.
      if (n > 0 && r() < 0.2) {
        const k = int(n);
        body = body.slice(0, k) + pick(['[', ']', '/', '\n', 'é', '\t', '=']) + body.slice(k + 1);
      }
      return `[${body}${r() < 0.9 ? ']' : ''}`;
    };
    const sameIni = (t: string, label: string): boolean => {
      const ts = iniSection(t);
      expect(engine.iniSectionInModule(t), `INI section line: ${label}`).to.equal(ts);
      return ts;
    };
    let sections = 0;
    let misses = 0;
    for (let i = 0; i < 4000; i++) {
      let t = '';
      for (let k = 1 + int(4); k > 0; k--) t += pick(before) + section() + pick(after) + pick(after);
      if (r() < 0.3) t += ' user = admin\n'.repeat(int(12));
      if (sameIni(t, short(t))) sections++;
      else misses++;
      // The text just searched is read from the input buffer as it stands; another string of the same units too.
      engine.searchInModule(t);
      sameIni(t, `after its search: ${short(t)}`);
      sameIni([...t].join(''), `a copy: ${short(t)}`);
    }
    expect(sections).to.be.greaterThan(1000);
    expect(misses).to.be.greaterThan(1000);
    for (const t of [...wholes, ...lines, ...evasions, ...fuzz]) sameIni(t, short(t));
  });

  it('finds the hinted lines and tells CSV headers alike: every column name in any case, quoted, spaced and near misses, every delimiter, lines cut by \\n, \\r\\n and a lone \\r, hints anywhere, at 0 and repeated; and on the three corpora', () => {
    const engine = compiledScanner();
    const r = rng(17);
    const int = (n: number) => Math.floor(r() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
    const names = [
      'password',
      'passwd',
      'secret access key',
      'secret_access_key',
      'secretaccesskey',
      'secret key',
      'secret',
      'client secret',
      'client_secret',
      'api key',
      'api_key',
      'token',
      'access token',
      'private key',
    ];
    const anyCase = (w: string) => [...w].map((c) => (r() < 0.3 ? c.toUpperCase() : c)).join('');
    // Near misses: a unit more or less, a non-ASCII letter whose upper case is ASCII (\u017f, \u0131), the Kelvin sign.
    const miss = (w: string) =>
      pick([w.slice(1), w + 's', 'x' + w, w.replace('s', '\u017f'), w.replace('i', '\u0131'), w.replace('k', '\u212a'), w.slice(0, -1)]);
    const cell = () => {
      const w =
        r() < 0.6
          ? anyCase(pick(names))
          : r() < 0.5
            ? miss(pick(names))
            : pick(['user', 'name', 'id', 'Access key ID', '', 'hunter2hunter2', 'AKIAIOSFODNN7EXAMPLE']);
      return pick(['', ' ', '"', ' "', '""']) + w + pick(['', ' ', '"', '" ', '\r', ' \r', 'x', '\u00a0']);
    };
    const line = () => Array.from({ length: 1 + int(5) }, cell).join(pick([',', ';', '\t', ', ', ' ', '|']));
    let headers = 0;
    let others = 0;
    for (let i = 0; i < 4000; i++) {
      let t = r() < 0.05 ? '\n' : '';
      for (let k = 1 + int(8); k > 0; k--) t += line() + pick(['\n', '\r\n', '\r', '\n\n', '\n']);
      if (r() < 0.2) t = t.slice(0, -1);
      // Hints anywhere (the reading takes any ascending places in the text), at 0, and repeated.
      const hints = [...new Set([...Array.from({ length: int(10) }, () => int(t.length)), ...(r() < 0.2 ? [0] : [])])].sort((a, b) => a - b);
      if (r() < 0.2 && hints.length > 0) hints.splice(int(hints.length), 0, hints[int(hints.length)]!);
      hints.sort((a, b) => a - b);
      const check = (u: string, label: string) => {
        const starts = hintedLines(u, hints);
        const found = engine.csvLinesInModule(u, hints);
        expect(found.starts, `hinted lines: ${label}`).to.deep.equal(starts);
        const ts = starts.map((s) => {
          const e = u.indexOf('\n', s);
          return csvHeader(u, s, e < 0 ? u.length : e) ? 1 : 0;
        });
        expect([...found.headers], `CSV headers: ${label}`).to.deep.equal(ts);
        return ts;
      };
      for (const h of check(t, short(t)))
        if (h) headers++;
        else others++;
      // The text just searched is read from the input buffer as it stands; another string of the same units too.
      engine.searchInModule(t);
      check(t, `after its search: ${short(t)}`);
      check([...t].join(''), `a copy: ${short(t)}`);
    }
    expect(headers).to.be.greaterThan(2000);
    expect(others).to.be.greaterThan(2000);
    // The corpora, with a hint at every word that names a credential, and one at random.
    for (const t of [...wholes, ...lines, ...evasions, ...fuzz]) {
      const hints = [...t.matchAll(/passw|pwd|secret|token|api[ _-]?key/gi)].map((m) => m.index);
      if (t.length > 0) hints.push(int(t.length));
      const sorted = [...new Set(hints)].sort((a, b) => a - b);
      const found = engine.csvLinesInModule(t, sorted);
      const starts = hintedLines(t, sorted);
      expect(found.starts, `hinted lines: ${short(t)}`).to.deep.equal(starts);
      const ts = starts.map((s) => {
        const e = t.indexOf('\n', s);
        return csvHeader(t, s, e < 0 ? t.length : e) ? 1 : 0;
      });
      expect([...found.headers], `CSV headers: ${short(t)}`).to.deep.equal(ts);
    }
  });

  it('scores texts with the intent word scorer alike: the features in order and the class sums to the bit, on every text of the three corpora, the terms disguised, texts past the word limit, and concepts at the bounds of a prefix', () => {
    const file = doc.rules.flatMap((r) => r.detectors.flatMap((d) => (d.kind === 'intent' ? [d.model] : [])))[0]!;
    const model = JSON.parse(readFileSync(`${RULES_DIR}${file}`, 'utf8')) as IntentModelDoc;
    // The rules' model, and the same with concept prefixes at both bounds of a prefix's length (3 and 14
    // units) and past them (2 and 15, never read), which the rules' model does not have.
    const bounds: IntentModelDoc = {
      ...model,
      concepts: {
        // Concepts of their own, so that reading a word by another (shorter) listed prefix shows.
        words: { ...model.concepts.words, exploit: 'bound-word', м4ке: 'bound-leet' },
        prefixes: {
          ...model.concepts.prefixes,
          syn: 'bound-3',
          ab: 'bound-2',
          weaponisations: 'bound-14',
          counterfeitings: 'bound-15',
          хим: 'bound-cyrillic',
        },
      },
    };
    const texts = [...wholes, ...lines, ...evasions, ...fuzz, ...squeezedCorpus(doc, 500, 20261128)];
    // Texts past the word limit (the scorer reads their last MAX_SCORED_WORDS words), and words at the
    // prefixes' bounds, whole, glued and leet.
    const long = wholes.join('\n');
    texts.push(long, long.repeat(3), `${long} synthesise weaponisations weaponisationsx weaponisation synth abc ab хим химия м4ке ѕyn s y n th3sis`);
    texts.push('synthesize counterfeitingsx counterfeitings counterfeiting abuse syn sy ab a Σ İstanbul ΑΣ ǅ');
    for (const [name, scorer] of [
      ['the rules model', new IntentScorer(model)],
      ['concepts at the bounds', new IntentScorer(bounds)],
    ] as const) {
      let concepts = 0;
      let past = 0;
      for (const t of texts) {
        const n = normalise(t).text;
        const read = sameScore(scorer, n, `${name}: ${short(t)}`);
        concepts += read.concepts;
        if (intentWords(n).length === MAX_SCORED_WORDS) past++;
        // The text as written too, where normalising changed it (the scorer reads what it is given).
        if (n !== t) sameScore(scorer, t, `${name}, as written: ${short(t)}`);
      }
      expect(concepts, `words read as concepts: ${name}`).to.be.greaterThan(1000);
      expect(past, `texts past the word limit: ${name}`).to.be.at.least(1);
    }
  });

  it('searches texts joined from their own searches and the stretches around the cuts, as the joined text whole, on the three corpora cut into messages', () => {
    for (const w of wholes) {
      const all = w.split('\n');
      const parts: string[] = [];
      for (let i = 0; i < all.length; i += 7) parts.push(all.slice(i, i + 7).join('\n') + '\n');
      sameStitched(parts.slice(0, 200), `cut: ${short(w)}`);
    }
    for (const e of evasions) {
      const cut = Math.floor(e.length / 2);
      sameStitched([e.slice(0, cut), e.slice(cut)], `split: ${short(e)}`);
    }
    for (let i = 0; i + 3 <= fuzz.length; i += 3) sameStitched([fuzz[i]!, fuzz[i + 1]!, fuzz[i + 2]!], `messages ${i}..${i + 2}`);
  });
});
