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
