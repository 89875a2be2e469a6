/**
 * The gateway's one canonical JSON form is RFC 8785: held byte for byte to the `canonicalize` package (a
 * reference implementation of RFC 8785) on random JSON values, refusing exactly what it refuses (a lone
 * surrogate anywhere, NaN, Infinity), however backslashes and "ud" text sit around it; and held to what
 * wrote it before (safe-stable-stringify's strict deterministic mode, with the same lone-surrogate check) on
 * what is not plain JSON too: undefined members and elements, toJSON, Dates, typed arrays, functions,
 * bigints, cycles, many keys, long strings.
 */
import { expect } from 'chai';
import canonicalize from 'canonicalize';
import { configure } from 'safe-stable-stringify';
import { canonicalJson } from '../src/canonical-json.js';

/** A small deterministic generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The pieces strings are made of: what escaping and key order are sensitive to.
const PIECES = ['a', 'Z', 'é', '東', '\u2028', '\u0000', '\u001f', '"', '\\', 'ud800', '\\ud', '\ud83d\ude00', '\ud800', '\udfff', '\uffff', ' '];
const NUMBERS = [0, -0, 1, -1, 0.5, 1e21, 1e-7, 5e-324, 9007199254740991, 123.456, Number.NaN, Number.POSITIVE_INFINITY];

function value(next: () => number, depth: number): unknown {
  const text = () => Array.from({ length: Math.floor(next() * 5) }, () => PIECES[Math.floor(next() * PIECES.length)]).join('');
  const kind = Math.floor(next() * (depth > 2 ? 4 : 6));
  if (kind === 0) return text();
  if (kind === 1) return NUMBERS[Math.floor(next() * NUMBERS.length)];
  if (kind === 2) return next() < 0.5;
  if (kind === 3) return null;
  if (kind === 4) return Array.from({ length: Math.floor(next() * 4) }, () => value(next, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [text(), value(next, depth + 1)]));
}

const outcome = (f: () => string | undefined): { text?: string | undefined; refused?: true } => {
  try {
    return { text: f() };
  } catch {
    return { refused: true };
  }
};

describe('canonical JSON (RFC 8785)', () => {
  it('writes what the RFC 8785 reference writes, and refuses what it refuses, on random values', () => {
    let refused = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const v = value(random(seed), 0);
      const ours = outcome(() => canonicalJson(v));
      expect(ours, `seed ${seed}`).to.deep.equal(outcome(() => canonicalize(v)));
      if (ours.refused) refused++;
    }
    // Both kinds of case were met: values refused and values written.
    expect(refused).to.be.within(100, 2900);
  });

  it('refuses a lone surrogate even after escaped backslashes, and takes the text "\\ud800" as text', () => {
    expect(canonicalJson({ path: 'C:\\ud800\\x' })).to.equal('{"path":"C:\\\\ud800\\\\x"}');
    expect(() => canonicalJson({ k: '\\\\\ud800' })).to.throw(TypeError);
    expect(() => canonicalJson({ ['\udc00']: 1 })).to.throw(TypeError);
    expect(canonicalJson({ b: 1, a: '\ud83d\ude00' })).to.equal('{"a":"\ud83d\ude00","b":1}');
  });
});

/** The canonical form as it was written before: the library, then the lone-surrogate check on its text. */
const library = configure({ deterministic: true, strict: true, bigint: false });
function before(v: unknown): string {
  const text = library(v);
  if (text === undefined) throw new TypeError('not a JSON value');
  if (/(?<!\\)(?:\\\\)*\\ud[89a-f]/.test(text)) throw new TypeError('lone surrogate');
  return text;
}

/** Values beyond JSON's: what the gateway's objects may hold, and what they should never hold. */
function odd(next: () => number, depth: number): unknown {
  const pick = Math.floor(next() * (depth > 2 ? 9 : 12));
  if (pick === 0) return undefined;
  if (pick === 1) return new Date(Date.UTC(2026, 10, 28, Math.floor(next() * 24)));
  if (pick === 2) return { toJSON: (key: string) => `key ${key}` };
  if (pick === 3) return next() < 0.1 ? () => 1 : next() < 0.1 ? 10n : next() < 0.1 ? Symbol('s') : 'x'.repeat(5000 + Math.floor(next() * 3));
  if (pick === 4) return next() < 0.2 ? new Uint8Array([1, 2]) : Buffer.from('ab');
  if (pick === 5) {
    const nested = odd(next, depth + 1);
    const member = next() < 0.5 ? undefined : 'not a function';
    return { toJSON: () => ({ nested, toJSON: member }) };
  }
  if (pick === 6) return Object.fromEntries(Array.from({ length: 70 + Math.floor(next() * 10) }, (_, i) => [`k${(i * 7919) % 97}-${i}`, i]));
  if (pick === 7 || pick === 8) return value(next, depth);
  if (pick === 9) {
    const o: Record<string, unknown> = { a: 1 };
    if (next() < 0.3) o['self'] = o;
    return o;
  }
  if (pick === 10) return Array.from({ length: Math.floor(next() * 4) }, () => odd(next, depth + 1));
  return Object.fromEntries(Array.from({ length: Math.floor(next() * 5) }, (_, i) => [next() < 0.5 ? `m${i}` : PIECES[Math.floor(next() * PIECES.length)]!, odd(next, depth + 1)]));
}

describe('canonical JSON: the same text as before on what is not plain JSON', () => {
  it('writes what safe-stable-stringify wrote, and refuses what it refused, on random odd values', () => {
    let refused = 0;
    let written = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const v = odd(random(seed), 0);
      const ours = outcome(() => canonicalJson(v));
      expect(ours, `seed ${seed}`).to.deep.equal(outcome(() => before(v)));
      if (ours.refused) refused++;
      else written++;
    }
    expect(refused).to.be.above(100);
    expect(written).to.be.above(1000);
  });

  it('writes a value shared by two members twice (only a cycle is refused), and one text inside another', () => {
    const shared = { b: [1, 'two'] };
    expect(canonicalJson({ y: shared, x: shared })).to.equal('{"x":{"b":[1,"two"]},"y":{"b":[1,"two"]}}');
    const inner = { toJSON: () => canonicalJson({ z: 1, a: [true, null] }) };
    expect(canonicalJson({ t: inner, s: 'x' })).to.equal('{"s":"x","t":"{\\"a\\":[true,null],\\"z\\":1}"}');
  });

  it('writes a long text and then a short one without anything of the first', () => {
    const long = Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, [i, 'v']]));
    expect(canonicalJson(long)).to.equal(before(long));
    expect(canonicalJson({ a: 1 })).to.equal('{"a":1}');
    expect(canonicalJson([])).to.equal('[]');
    expect(canonicalJson({})).to.equal('{}');
  });
});
