/**
 * The gateway's one canonical JSON form is RFC 8785: held byte for byte to the `canonicalize` package (a
 * reference implementation of RFC 8785) on random JSON values, refusing exactly what it refuses (a lone
 * surrogate anywhere, NaN, Infinity), however backslashes and "ud" text sit around it.
 */
import { expect } from 'chai';
import canonicalize from 'canonicalize';
import { canonicalJson } from '../src/canonical-json.js';
import { rng } from '../scripts/rng.js';

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
      const v = value(rng(seed), 0);
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
