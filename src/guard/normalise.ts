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
// Blank characters that are neither default-ignorable nor format characters, so Unicode's properties miss
// them, yet render as nothing or as an empty box: BRAILLE PATTERN BLANK, MUSICAL SYMBOL NULL NOTEHEAD, OBJECT
// REPLACEMENT CHARACTER. (The Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 are default-ignorable.)
const INVISIBLE = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\p{Cs}\u2800\u{1D159}\uFFFC]$/u;
const MARKS = /\p{M}/gu;

// Folding a code point costs two normalize() calls; text repeats its code points, so remember them
// (a flat table for the BMP, a bounded map above it).
const bmpFolds = new Array<string | undefined>(65536);
const astralFolds = new Map<number, string>();
const ASTRAL_CACHE_MAX = 65_536;

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
  if (cp < 0x10000) {
    let f = bmpFolds[cp];
    if (f === undefined) bmpFolds[cp] = f = computeFold(cp);
    return f;
  }
  let f = astralFolds.get(cp);
  if (f === undefined) {
    f = computeFold(cp);
    if (astralFolds.size < ASTRAL_CACHE_MAX) astralFolds.set(cp, f);
  }
  return f;
}

/**
 * The code point at unit `i` of `s`: a surrogate pair read whole, any other unit (a lone surrogate too) as it
 * is. Not `String.prototype.codePointAt`: on Node 24 (V8 13.6), once the calling function is optimised,
 * `codePointAt` at the last unit of a sliced string (`slice`/`substring` of 13 units or more, a view of its
 * parent) pairs a trailing high surrogate with the parent's next unit, a character the string does not hold.
 * A message cut inside a surrogate pair is such a string, and what it normalised to then depended on what
 * the process had run before.
 */
export function codePointAt(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c < 0xd800 || c > 0xdbff || i + 1 >= s.length) return c;
  const d = s.charCodeAt(i + 1);
  return d >= 0xdc00 && d <= 0xdfff ? 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00) : c;
}

const utf16 = new TextDecoder('utf-16le');

export function normalise(original: string): Normalised {
  if (PLAIN_ASCII.test(original)) return { original, text: original, starts: null, ends: null };
  const n = original.length;
  let cap = n + 16;
  let units = new Uint16Array(cap);
  let starts = new Int32Array(cap);
  let ends = new Int32Array(cap);
  let length = 0;
  for (let i = 0; i < n;) {
    const c = original.charCodeAt(i);
    if (c < 0x80) {
      // Printable ASCII, tab and line breaks pass; other control characters are dropped.
      if ((c >= 0x20 && c !== 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d) {
        if (length === cap) ({ cap, units, starts, ends } = grow(cap, units, starts, ends));
        units[length] = c;
        starts[length] = i;
        ends[length] = i + 1;
        length++;
      }
      i++;
      continue;
    }
    const cp = c >= 0xd800 && c <= 0xdbff ? codePointAt(original, i) : c;
    const width = cp > 0xffff ? 2 : 1;
    const f = foldCodePoint(cp);
    for (let k = 0; k < f.length; k++) {
      if (length === cap) ({ cap, units, starts, ends } = grow(cap, units, starts, ends));
      units[length] = f.charCodeAt(k);
      starts[length] = i;
      ends[length] = i + width;
      length++;
    }
    i += width;
  }
  return { original, text: utf16.decode(units.subarray(0, length)), starts: starts.subarray(0, length), ends: ends.subarray(0, length) };
}

function grow(cap: number, units: Uint16Array, starts: Int32Array, ends: Int32Array) {
  const next = cap * 2;
  const u = new Uint16Array(next);
  u.set(units);
  const s = new Int32Array(next);
  s.set(starts);
  const e = new Int32Array(next);
  e.set(ends);
  return { cap: next, units: u, starts: s, ends: e };
}

/** Maps the normalised span [start, end) (end > start) to the original span it came from. */
export function originalSpan(n: Normalised, start: number, end: number): [number, number] {
  if (n.starts === null || n.ends === null) return [start, end];
  return [n.starts[start]!, n.ends[end - 1]!];
}
