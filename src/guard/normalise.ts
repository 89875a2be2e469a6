/**
 * Normalisation: the one canonical form every detector matches against, with a map back to the original.
 *
 * Evasions work by making text look the same to a reader but different to a matcher. So, per code point:
 * NFKC (fullwidth `ｓｋ` -> `sk`, mathematical bold, ligatures), default-ignorable and format characters
 * removed (zero-width space/joiners, soft hyphen, bidi controls, variation selectors, tag characters), other
 * control characters removed, diacritics stripped (NFD, drop combining marks), look-alikes folded
 * (homoglyphs.ts). Case is kept: key shapes are case-sensitive; the lexical classifier lowercases itself.
 *
 * Redaction must mask the ORIGINAL text, so every normalised UTF-16 unit remembers the original span of the
 * code point it came from (`starts`/`ends`). Removed characters belong to no unit; a match that spans them
 * maps to an original span that covers them, which is what masking a zero-width-laced secret needs.
 *
 * Text that is plain printable ASCII (nearly all of it) takes a fast path: nothing changes, no maps.
 */
import { HOMOGLYPHS } from './homoglyphs.js';

export interface Normalised {
  readonly original: string;
  readonly text: string;
  /** Original start offset of each unit of `text`; null when `text === original` (identity). */
  readonly starts: Int32Array | null;
  /** Original end offset of each unit of `text`; null when `text === original`. */
  readonly ends: Int32Array | null;
}

// Tab, line feed, carriage return and printable ASCII: nothing to normalise.
const PLAIN_ASCII = /^[\t\n\r\x20-\x7e]*$/;
const INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Cs}]$/u;
const MARKS = /\p{M}/gu;

// Folding a code point costs two normalize() calls; text repeats its code points, so remember them.
const foldCache = new Map<number, string>();
const FOLD_CACHE_MAX = 65_536;

function computeFold(cp: number): string {
  const homoglyph = HOMOGLYPHS.get(cp);
  if (homoglyph !== undefined) return homoglyph;
  const ch = String.fromCodePoint(cp);
  if (INVISIBLE.test(ch)) return '';
  const folded = ch.normalize('NFKC').normalize('NFD').replace(MARKS, '');
  let out = '';
  for (const c of folded) {
    const cc = c.codePointAt(0)!;
    out += HOMOGLYPHS.get(cc) ?? (INVISIBLE.test(c) ? '' : c);
  }
  return out;
}

/** The folded form of one non-ASCII code point ('' when it is removed). */
export function foldCodePoint(cp: number): string {
  let f = foldCache.get(cp);
  if (f === undefined) {
    f = computeFold(cp);
    if (foldCache.size < FOLD_CACHE_MAX) foldCache.set(cp, f);
  }
  return f;
}

/** Grows with the output; normalised text is usually no longer than the original. */
class Builder {
  units: Uint16Array;
  starts: Int32Array;
  ends: Int32Array;
  length = 0;
  constructor(capacity: number) {
    this.units = new Uint16Array(capacity);
    this.starts = new Int32Array(capacity);
    this.ends = new Int32Array(capacity);
  }
  push(unit: number, start: number, end: number): void {
    if (this.length === this.units.length) this.grow();
    this.units[this.length] = unit;
    this.starts[this.length] = start;
    this.ends[this.length] = end;
    this.length++;
  }
  private grow(): void {
    const cap = this.units.length * 2 + 16;
    const u = new Uint16Array(cap);
    u.set(this.units);
    const s = new Int32Array(cap);
    s.set(this.starts);
    const e = new Int32Array(cap);
    e.set(this.ends);
    this.units = u;
    this.starts = s;
    this.ends = e;
  }
  text(): string {
    const dec = new TextDecoder('utf-16le');
    return dec.decode(this.units.subarray(0, this.length));
  }
}

export function normalise(original: string): Normalised {
  if (PLAIN_ASCII.test(original)) return { original, text: original, starts: null, ends: null };
  const b = new Builder(original.length + 16);
  for (let i = 0; i < original.length; ) {
    const c = original.charCodeAt(i);
    if (c < 0x80) {
      if ((c >= 0x20 && c !== 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d) b.push(c, i, i + 1);
      i++;
      continue;
    }
    const cp = original.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const f = foldCodePoint(cp);
    for (let k = 0; k < f.length; k++) b.push(f.charCodeAt(k), i, i + width);
    i += width;
  }
  return { original, text: b.text(), starts: b.starts.subarray(0, b.length), ends: b.ends.subarray(0, b.length) };
}

/** Maps the normalised span [start, end) (end > start) to the original span it came from. */
export function originalSpan(n: Normalised, start: number, end: number): [number, number] {
  if (n.starts === null || n.ends === null) return [start, end];
  return [n.starts[start]!, n.ends[end - 1]!];
}
