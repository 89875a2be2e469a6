/**
 * The guard's readings as they were first written: plain, slow, and obviously right. The scan replaced each
 * with a faster one (src/guard/decoders.ts, generic.ts, laced.ts); test/guard/scan-sharing.test.ts holds the
 * fast ones to these on the corpora and on random text. They live here, not in src/, because nothing at run
 * time may call them.
 */
import { KEYWORDS } from '../../../src/guard/generic.js';
import { isTokenCode, nextPiece } from '../../../src/guard/laced.js';

/** The text reversed, a character (UTF-16 code unit) at a time. */
export const reversedByChar = (text: string): string => {
  let out = '';
  for (let i = text.length - 1; i >= 0; i--) out += text[i];
  return out;
};

/** ROT13 of the ASCII letters, a replace callback per letter. */
export const rot13ByReplace = (text: string): string =>
  text.replace(/[A-Za-z]/g, (c) => {
    const base = c <= 'Z' ? 65 : 97;
    return String.fromCharCode(((c.charCodeAt(0) - base + 13) % 26) + base);
  });

/** keywordStarts as it was first written: one native search per keyword, then sorted. */
export function keywordStartsBySearch(text: string): number[] {
  const starts: number[] = [];
  for (const k of KEYWORDS) for (let i = text.indexOf(k); i >= 0; i = text.indexOf(k, i + 1)) starts.push(i);
  return starts.sort((a, b) => a - b);
}

const JOINERS = /[-_]/g;

/**
 * The first `max` characters the text from `p` reads as across separators (`bare`: with `-`/`_` skipped
 * too; a unit: with that one skipped), stopping at the end of the laced run: leadInto as a string, built
 * piece by piece.
 */
export function lead(text: string, p: number, max: number, bare: boolean | number): string {
  const n = text.length;
  let out = '';
  let i = p;
  while (out.length < max && i < n) {
    // A token, taken as one slice.
    let e = i;
    while (e < n && e - i < max && isTokenCode(text.charCodeAt(e))) e++;
    if (e > i) {
      const piece = text.slice(i, e);
      out += bare === true ? piece.replace(JOINERS, '') : bare === false ? piece : piece.replaceAll(String.fromCharCode(bare), '');
      i = e;
      continue;
    }
    const q = nextPiece(text, i);
    if (q < 0) break;
    i = q;
  }
  return out.length > max ? out.slice(0, max) : out;
}

const JOIN_WINDOW = 320;
const isJoinKeyChar = (c: number): boolean => /[A-Za-z0-9_\-/+=.]/.test(String.fromCharCode(c));

/**
 * joins.ts `joinedView` as it was first written: the view, and a table of where each of its units came from
 * (`starts`, `ends`: a window's separator stands for nothing, at that window's end), two arrays of the view's
 * length filled unit by unit. `matches` is joinMatches(text).
 */
export function joinedViewTable(text: string, matches: ArrayLike<number> | null): { text: string; starts: number[]; ends: number[] } | null {
  if (matches === null) return null;
  const sides = (at: number, to: number) => {
    for (let k = 1; k <= 3; k++) if (at - k < 0 || !isJoinKeyChar(text.charCodeAt(at - k))) return false;
    for (let k = 0; k < 3; k++) if (to + k >= text.length || !isJoinKeyChar(text.charCodeAt(to + k))) return false;
    return true;
  };
  const joins: number[] = [];
  for (let k = 0; k < matches.length; k += 2) {
    const at = matches[k]!;
    const to = matches[k + 1]!;
    const c = text.charCodeAt(at);
    const oneSided = c === 0x24 ? text.charCodeAt(to - 1) !== 0x7d : text.charCodeAt(to - 1) === 0x7d;
    if (oneSided ? isJoinKeyChar(text.charCodeAt(at - 1)) || isJoinKeyChar(text.charCodeAt(to)) : sides(at, to)) joins.push(at, to);
  }
  if (joins.length === 0) return null;
  const starts: number[] = [];
  const ends: number[] = [];
  let view = '';
  const copy = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      starts.push(i);
      ends.push(i + 1);
      view += text[i];
    }
  };
  let windowEnd = -1;
  let at = 0;
  for (let k = 0; k < joins.length; k += 2) {
    const s = joins[k]!;
    const e = joins[k + 1]!;
    if (s - JOIN_WINDOW > windowEnd) {
      if (windowEnd >= 0) {
        copy(at, windowEnd);
        view += '\u0000';
        starts.push(windowEnd);
        ends.push(windowEnd);
      }
      at = Math.max(0, s - JOIN_WINDOW);
    }
    copy(at, s);
    at = e;
    windowEnd = Math.min(text.length, e + JOIN_WINDOW);
  }
  copy(at, windowEnd);
  return { text: view, starts, ends };
}
