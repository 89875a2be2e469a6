/**
 * canonicalJson writes its text with the platform's JSON.stringify, the value's members put in key order
 * first, and leaves anything that is not plain data to `safe-stable-stringify`, which wrote every text
 * before. A mistake there would change the bytes receipts' leaves and decision records' hashes are taken
 * over, so it is held byte for byte to the library (strict, deterministic, as src/canonical-json.ts
 * configures it) and to the `canonicalize` package (RFC 8785's reference) on seeded random values of every
 * shape the receipts and the decision records hold, in every key order, and on values that are not plain
 * data: it writes what the library writes and refuses what the library (or the lone-surrogate rule) refuses.
 */
import { expect } from 'chai';
import canonicalize from 'canonicalize';
import { configure } from 'safe-stable-stringify';
import { canonicalJson } from '../src/canonical-json.js';
import { rng } from '../scripts/rng.js';

const library = configure({ deterministic: true, strict: true, bigint: false });
const LONE_SURROGATE_ESCAPE = /(?<!\\)(?:\\\\)*\\ud[89a-f]/;

/** What the gateway wrote before: the library's text, refused on a lone surrogate. */
function reference(value: unknown): string {
  const text = library(value);
  if (text === undefined) throw new TypeError('not a JSON value');
  if (LONE_SURROGATE_ESCAPE.test(text)) throw new TypeError('lone surrogate');
  return text;
}

const outcome = (f: () => string | undefined): { text?: string | undefined; refused?: true } => {
  try {
    return { text: f() };
  } catch {
    return { refused: true };
  }
};

type Next = () => number;
const pick = <T>(next: Next, xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;

// What escaping, quoting and key order are sensitive to: control characters, quotes, backslashes, the line
// separators JSON leaves as they are, paired and lone surrogates, "\ud" text that is not an escape, letters
// that sort before and after ASCII and each other, digits (array-index keys), and `__proto__`.
// prettier-ignore
const PIECES = [
  'a', 'Z', 'z', '_', '-', '.', ':', ' ', '0', '7', '10', '9', 'é', 'É', 'ß', '東', '京', 'Ω', '\u00ff', '\u0100',
  '\u2028', '\u2029', '\u0000', '\u0001', '\u0007', '\b', '\t', '\n', '\f', '\r', '\u001f', '\u007f', '"', '\\', '/',
  'ud800', '\\ud', '\\u0041', '\ud83d\ude00', '\ud83c\udf0d', '\ud800', '\udbff', '\udc00', '\udfff', '\ufeff',
  '\uffff', '\ue000', 'rcpt_', 'dec_', 'did:web:portcullis.localhost:tenant:', '2026-11-28T15:09:49.472Z',
] as const;
// prettier-ignore
const NUMBERS = [
  0, -0, 1, -1, 2, 10, 64, 0.5, -0.5, 0.1, 1 / 3, 123.456, 1e21, 1e-7, 1e-6, 1e20, 5e-324, -5e-324,
  1.7976931348623157e308, -1.7976931348623157e308, 2 ** 53, 2 ** 53 + 2, 9007199254740991, -9007199254740991,
  4294967295, 4294967296, 1234567, 4.5e6, 225000, 0.000001, 100.0, 1e300, 1e-300,
] as const;
const REFUSED_NUMBERS = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] as const;
// prettier-ignore
const KEYS = [
  'id', 'callId', 'call_id', 'decision_id', 'allow', 'codes', 'versions', 'record', 'sha256', 'guardrails', 'block',
  'redact', 'flag', 'upstream', 'usage', 'rates', 'inputPerMTok', 'cached_tokens', 'prompt_tokens', 'total_tokens',
  'documents', 'policy-data', 'a', 'A', 'b', 'B', 'aa', 'ab', 'a0', 'a_', 'a-', '', ' ', 'é', 'e', 'f', '東京', 'Ω',
  '\ud83d\ude00', '\ue000', '\uffff', 'z', '~', '0', '1', '9', '10', '01', '-1', '1.5', '4294967295', '4294967294',
  '__proto__', 'toJSON', 'constructor', 'length', 'hasOwnProperty',
] as const;

function text(next: Next, lone: boolean): string {
  // Lone surrogates only where the value may be refused, so most values are written, not refused.
  const piece = () => {
    const p = pick(next, PIECES);
    return !lone && p.length === 1 && p.charCodeAt(0) >= 0xd800 && p.charCodeAt(0) <= 0xdfff ? '' : p;
  };
  let s = '';
  const n = Math.floor(next() * 6);
  for (let i = 0; i < n; i++) s += piece();
  // Past 5,000 code units the library hands every string to JSON.stringify.
  if (next() < 0.03) s += 'x'.repeat(5000 + Math.floor(next() * 10)) + piece();
  return s;
}

function key(next: Next, lone: boolean): string {
  return next() < 0.7 ? pick(next, KEYS) : text(next, lone);
}

/** A random JSON-shaped value: objects in random key order, arrays with undefined and holes, every scalar. */
function value(next: Next, depth: number, lone: boolean, refusable: boolean): unknown {
  const kind = Math.floor(next() * (depth > 4 ? 5 : 8));
  switch (kind) {
    case 0:
      return text(next, lone);
    case 1:
      return refusable && next() < 0.05 ? pick(next, REFUSED_NUMBERS) : pick(next, NUMBERS);
    case 2:
      return next() < 0.5 ? Math.floor((next() - 0.5) * 2 ** 40) : (next() - 0.5) * 10 ** Math.floor(next() * 40 - 20);
    case 3:
      return next() < 0.5;
    case 4:
      return next() < 0.8 ? null : undefined;
    case 5: {
      const a: unknown[] = [];
      const n = Math.floor(next() * 5);
      for (let i = 0; i < n; i++) {
        if (next() < 0.1)
          a.length = i + 1; // a hole
        else a.push(value(next, depth + 1, lone, refusable));
      }
      return a;
    }
    default: {
      // Built by JSON.parse half the time, so `__proto__` can be an own key as it is in a parsed body.
      const entries: Array<[string, unknown]> = [];
      const n = Math.floor(next() * 7);
      for (let i = 0; i < n; i++) entries.push([key(next, lone), value(next, depth + 1, lone, refusable)]);
      if (next() < 0.5) return Object.fromEntries(entries.filter(([k]) => k !== '__proto__'));
      const parsed = JSON.parse(
        `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v === undefined ? null : v) ?? 'null'}`).join(',')}}`,
      ) as unknown;
      return parsed;
    }
  }
}

/** A receipt as src/call/receipt.ts builds one, its members in an order the seed picks. */
function receiptLike(next: Next, lone: boolean): Record<string, unknown> {
  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  };
  const obj = (entries: Array<[string, unknown]>) => Object.fromEntries(next() < 0.3 ? entries : shuffle(entries));
  const s = () => text(next, lone);
  const n = () => (next() < 0.5 ? pick(next, NUMBERS) : Math.floor(next() * 1e7));
  const versions = obj(['catalog', 'compliance', 'config', 'firewall', 'guardrails', 'policy', 'rules'].map((k) => [k, s()]));
  const guardrails = obj([
    ['block', Array.from({ length: Math.floor(next() * 3) }, s)],
    ['redact', Array.from({ length: Math.floor(next() * 3) }, s)],
    ['flag', Array.from({ length: Math.floor(next() * 3) }, s)],
  ]);
  return obj([
    ['id', `rcpt_${s()}`],
    ['callId', s()],
    ['principalId', s()],
    ['createdAt', new Date(Math.floor(next() * 4e12)).toISOString()],
    ['finishedAt', s()],
    ['outcome', pick(next, ['answered', 'refused', 'failed'])],
    ...(next() < 0.3 ? [['error', obj([['code', s()]])] as [string, unknown]] : []),
    ['model', next() < 0.1 ? undefined : s()],
    ['route', next() < 0.3 ? null : s()],
    ['team', next() < 0.3 ? null : s()],
    ['task', s()],
    ['scope', null],
    ['band', s()],
    [
      'decision',
      obj([
        ['allow', next() < 0.5],
        ['codes', [s(), s()].slice(0, Math.floor(next() * 3))],
        ['versions', versions],
        ...(next() < 0.8
          ? [
              [
                'record',
                obj([
                  ['id', s()],
                  ['sha256', s()],
                ]),
              ] as [string, unknown],
            ]
          : []),
      ]),
    ],
    ['guardrails', guardrails],
    [
      'upstream',
      next() < 0.3
        ? null
        : obj([['model', s()], ['echoedModel', s()], ['origin', s()], ...(next() < 0.2 ? [['fallbackModel', s()] as [string, unknown]] : [])]),
    ],
    ['day', s()],
    [
      'usage',
      next() < 0.2
        ? null
        : obj([
            ['prompt_tokens', n()],
            ['completion_tokens', n()],
            ['total_tokens', n()],
            ['cached_tokens', n()],
          ]),
    ],
    ['billing', pick(next, ['free', 'paid', null])],
    ['chargedMicroUSD', n()],
    ['pricedMicroUSD', n()],
    ['reservedMicroUSD', n()],
    ['reservedTokens', n()],
    ['countedTokens', n()],
    [
      'rates',
      obj([
        ['inputPerMTok', n()],
        ['cachedInputPerMTok', n()],
        ['outputPerMTok', n()],
        ['egressPerGiB', n()],
        ['storagePerGiBMonth', n()],
      ]),
    ],
    ...(next() < 0.2 ? [['note', s()] as [string, unknown]] : []),
  ]);
}

/** A decision record as src/decisions/service.ts builds one, its members in an order the seed picks. */
function recordLike(next: Next, lone: boolean): Record<string, unknown> {
  const receipt = receiptLike(next, lone);
  const s = () => text(next, lone);
  const entries: Array<[string, unknown]> = [
    ['decision_id', `dec_${s()}`],
    ['path', 'admission/decision'],
    [
      'input',
      {
        findings: [s()].slice(0, Math.floor(next() * 2)),
        model: s(),
        principal: { aup: next() < 0.5, id: s(), rung: null, rungExpired: false, scopes: [] },
        scopeId: null,
        task: s(),
      },
    ],
    ['result', { allow: true, band: s(), denials: [{ code: s() }], guardrails: receipt.guardrails, scope: null, team: s() }],
    ['bundles', { admission: { revision: s() } }],
    ['labels', { app: 'portcullis', kind: pick(next, ['live', 'shadow']) }],
    ['timestamp', s()],
    ['erased', ['/input/messages']],
    ['masked', []],
    ['call_id', s()],
    ['versions', (receipt.decision as Record<string, unknown> | undefined)?.versions ?? {}],
    ['documents', Object.fromEntries(['catalog', 'guardrails', 'policy', 'policy-data', 'policy-sources', 'rungs'].map((k) => [k, s()]))],
    ['sizes', { messages: Math.floor(next() * 9), inputChars: Math.floor(next() * 1e6), inputTokens: Math.floor(next() * 1e5) }],
  ];
  if (next() < 0.7) entries.sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries);
}

function expectSame(v: unknown, label: string): { refused: boolean } {
  const ours = outcome(() => canonicalJson(v));
  expect(ours, label).to.deep.equal(outcome(() => reference(v)));
  if (!ours.refused) {
    // And the text is RFC 8785's own form of the JSON it holds (the reference package, given the value as read
    // back: it writes an array's holes its own way).
    expect(ours.text, `${label} (canonicalize)`).to.equal(canonicalize(JSON.parse(ours.text!)));
  }
  return { refused: ours.refused === true };
}

describe('canonical JSON: written by JSON.stringify in key order, byte for byte the library', () => {
  it('writes what the library writes on 4,000 random JSON values of every shape, lone surrogates and all', () => {
    let refused = 0;
    for (let seed = 1; seed <= 4000; seed++) {
      const next = rng(seed);
      if (expectSame(value(next, 0, next() < 0.3, next() < 0.2), `seed ${seed}`).refused) refused++;
    }
    expect(refused).to.be.within(50, 2000);
  });

  it('writes what the library writes on 3,000 receipts and 3,000 decision records, in random member orders', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const next = rng(100_000 + seed);
      const lone = next() < 0.05;
      expectSame(receiptLike(next, lone), `receipt, seed ${seed}`);
      expectSame(recordLike(next, lone), `record, seed ${seed}`);
    }
  });

  it('writes the same text for a value in key order, in reverse order and with members shared between records', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const next = rng(200_000 + seed);
      const receipt = receiptLike(next, false);
      const reversed = JSON.parse(JSON.stringify(receipt), function (this: unknown, _k, v: unknown) {
        return v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v;
      }) as unknown;
      const text = canonicalJson(receipt);
      expect(canonicalJson(reversed), `seed ${seed}`).to.equal(text);
      expect(canonicalJson(JSON.parse(text)), `seed ${seed}, read back`).to.equal(text);
      const frozen = Object.freeze({ ...receipt, decision: Object.freeze({ ...(receipt.decision as object) }) });
      expect(canonicalJson({ a: frozen, b: [frozen, frozen] }), `seed ${seed}, shared`).to.equal(reference({ a: frozen, b: [frozen, frozen] }));
      // The value written is not changed by being written.
      expect(JSON.stringify(receipt)).to.equal(JSON.stringify(receipt));
    }
  });

  it('writes numbers as the library does: -0, the shortest forms, the exponent bounds', () => {
    for (const n of NUMBERS) expect(canonicalJson({ n, a: [n] }), String(n)).to.equal(reference({ n, a: [n] }));
    expect(canonicalJson({ z: -0, y: 1e21, x: 1e-7, w: 5e-324, v: 2 ** 53 + 2 })).to.equal('{"v":9007199254740994,"w":5e-324,"x":1e-7,"y":1e+21,"z":0}');
    for (const n of REFUSED_NUMBERS) {
      expect(() => canonicalJson({ n })).to.throw(TypeError);
      expect(() => canonicalJson([n])).to.throw(TypeError);
    }
  });

  it('sorts keys by UTF-16 code units, array-index keys and `__proto__` included', () => {
    const cases: unknown[] = [
      { b: 1, a: 2, '10': 3, '9': 4, '': 5, '\ud83d\ude00': 6, '\uffff': 7, é: 8, Z: 9 },
      { '1': 1, '!': 2 },
      { '10': 1, '9': 2 },
      { '01': 1, '1': 2 },
      { '4294967295': 1, '4294967294': 2, a: 3 },
      JSON.parse('{"b":1,"__proto__":{"z":1,"a":2},"a":3}'),
      JSON.parse('{"__proto__":1}'),
      JSON.parse('{"a":{"d":1,"c":2},"__proto__":[3]}'),
      { toJSON: 1, a: 2 },
      { constructor: 'x', length: 3, hasOwnProperty: null },
    ];
    for (const [i, v] of cases.entries()) expectSame(v, `case ${i}`);
    expect(canonicalJson({ '10': 1, '9': 2, b: { y: 1, x: 2 } })).to.equal('{"10":1,"9":2,"b":{"x":2,"y":1}}');
  });

  it('escapes strings and keys as the library does: control characters, quotes, backslashes, U+2028, pairs', () => {
    for (let c = 0; c < 0x80; c++) {
      const s = `x${String.fromCharCode(c)}y`;
      expectSame({ [s]: s, k: [s] }, `U+${c.toString(16)}`);
    }
    for (const s of ['\u2028\u2029', '\ud83d\ude00', '\ufeff', '\\ud800', 'C:\\ud800\\x', '"quoted"', '\\"', 'x'.repeat(6000) + '"', 'x'.repeat(6000)]) {
      expectSame({ [s]: s }, JSON.stringify(s).slice(0, 40));
    }
  });

  it('refuses a lone surrogate anywhere, as before', () => {
    for (const s of ['\ud800', '\udfff', 'a\ud800b', '\udc00\ud800', '\\\\\ud800', 'x'.repeat(6000) + '\ud800']) {
      expect(() => canonicalJson({ k: s }), JSON.stringify(s).slice(0, 20)).to.throw(TypeError);
      expect(() => canonicalJson({ [s]: 1 })).to.throw(TypeError);
      expect(() => canonicalJson([[s]])).to.throw(TypeError);
    }
  });

  it('leaves what is not plain data to the library: dates, toJSON, class instances, boxed values, typed arrays', () => {
    class Point {
      constructor(
        readonly y: number,
        readonly x: number,
      ) {}
    }
    const cases: unknown[] = [
      { at: new Date(0), b: 1, a: 2 },
      { b: { toJSON: () => ({ z: 1, y: [2, { d: 1, c: 2 }] }) }, a: 1 },
      { v: { toJSON: (k: string) => `key ${k}` } },
      { p: new Point(1, 2) },
      [new Point(3, 4)],
      { s: new String('boxed'), n: new Number(3), t: new Boolean(false) },
      { u8: new Uint8Array([3, 1, 2]), empty: new Uint8Array(0) },
      { m: new Map([['a', 1]]), set: new Set([1]) },
      { f: () => 1 },
      [() => 1],
      { s: Symbol('x') },
      { b: 10n },
      { nested: { deeper: { f() {} } } },
      Object.assign(Object.create(null) as object, { b: 1, a: { d: 2, c: 3 } }),
      Object.assign([1, 2], { extra: 'ignored' }),
      { list: Object.assign([1, 2], { toJSON: () => ({ b: 1, a: [{ d: 1, c: 2 }] }) }) },
      // eslint-disable-next-line no-sparse-arrays
      [1, , 3, undefined],
      { a: undefined, b: [undefined], c: null },
      undefined,
      'text',
      -0,
      null,
      true,
    ];
    for (const [i, v] of cases.entries())
      expect(
        outcome(() => canonicalJson(v)),
        `case ${i}`,
      ).to.deep.equal(outcome(() => reference(v)));
  });

  it('writes values nested deeper than it walks, and refuses a cycle, as the library does', () => {
    let deep: unknown = { b: 1, a: 'end' };
    for (let i = 0; i < 200; i++) deep = i % 2 ? { z: deep, y: i } : [deep, i];
    expect(canonicalJson(deep)).to.equal(reference(deep));
    const cycle: Record<string, unknown> = { b: 1, a: 2 };
    cycle.self = { again: cycle };
    expect(() => canonicalJson(cycle)).to.throw(TypeError);
    expect(() => reference(cycle)).to.throw();
  });
});
