/**
 * The squeezed reading of explicit block terms: a term whose every occurrence must be refused (a block rule's
 * `any` list, such as `csam-terms`) is looked for in the text with everything but its letters squeezed out,
 * so that how its letters are spaced, joined or disguised does not matter: `childporn`, `#ChildPorn`,
 * `c\nh\ni\nl\nd`, `c/h/i/l/d`, `(c)(h)(i)(l)(d)`, `ch il dp or n`, `c h 1 l d p o r n`, `ch!ld`, `chi1d`,
 * `chi|d`, `(hild`, `c#ild`, `c|-|ild`, `p()rn`, `p@rn`, `p°rn`, `por|\|`.
 *
 * The word matcher (lexical.ts) reads whole words, which is right for terms whose joined form is an ordinary
 * word (`the rapist`, `therapist`) in flag and redact rules; an explicit block term has no innocent spelling,
 * so here its words are joined and it is found whatever surrounds its letters, provided it starts a word (the
 * character before it is not a letter or a digit: `torpedo porn` is not `pedo porn`) and, unless the term ends
 * in `*`, ends one; and is not the start of one of the few ordinary words that hold a term (ORDINARY_WORDS).
 *
 * Both the terms and the text (already normalised: look-alikes, accents, invisibles and stroke letters such
 * as `ł` folded) are lowercased and read as letter classes: the letters a reader confuses in leetspeak are one
 * class (`i`, `l`, `1`, `!`, `|`, `¡`; `o`, `a`, `0`, `4`, `@`, `°`, `()`, `[]`; `c` and `(`; `h`, `#` and `|-|`; `n` and `|\|`;
 * `s`, `5` and `$`; `e` and `3`; `t` and `7`), and every other character is squeezed out. (Letters are not
 * merged into runs: `loli` would then read as `lol`.) Symbols that stand for letters are also separators (`c|h|i|l|d`), so the
 * text is read twice: with those symbols as letters, and with them squeezed out too.
 *
 * Linear: two passes over each text, then one native search per term and reading.
 *
 * The compiled scanner (compiled.ts `readWords`, scanner/src/squeezed.rs) reads the same way from the
 * same tables (`describe`), over the texts it already holds for the word stream; `hits` here stays the
 * reference it is tested against.
 */
import { isWordUnit } from './words.js';

// What each code unit reads as (0: squeezed out), and what the symbols that stand for letters read as (the
// first reading only): flat tables, as every unit of every text is read twice.
const LETTERS = new Uint16Array(65536);
const SYMBOLS = new Uint16Array(65536);
const set = (table: Uint16Array, chars: string, to: string) => {
  for (const ch of chars) table[ch.charCodeAt(0)] = to.charCodeAt(0);
};
for (let c = 0x30; c <= 0x39; c++) LETTERS[c] = c;
for (let c = 0x61; c <= 0x7a; c++) LETTERS[c] = c;
set(LETTERS, 'il1', 'i');
set(LETTERS, 'oa04', 'o');
set(LETTERS, 's5', 's');
set(LETTERS, 'e3', 'e');
set(LETTERS, 't7', 't');
set(SYMBOLS, '!|¡', 'i');
set(SYMBOLS, '@°', 'o');
set(SYMBOLS, '$', 's');
set(SYMBOLS, '#', 'h');
set(SYMBOLS, '(<', 'c');
// Symbols that read as one letter together (before the single symbols), by their first unit.
const DIGRAPHS: ReadonlyArray<readonly [string, number]> = [
  ['()', 0x6f],
  ['[]', 0x6f],
  ['{}', 0x6f],
  ['|-|', 0x68],
  ['|\\|', 0x6e],
];
const DIGRAPH_FIRST = new Uint8Array(128);
for (const [d] of DIGRAPHS) DIGRAPH_FIRST[d.charCodeAt(0)] = 1;

const isWordChar = (t: string, i: number): boolean => i >= 0 && i < t.length && isWordUnit(t.charCodeAt(i));

interface Reading {
  text: string;
  /** Per squeezed unit, the offset of its character (or symbols) in the text. */
  from: Int32Array;
  /** Per squeezed unit, the offset just past it. */
  to: Int32Array;
}

// The readings' columns, reused from text to text (matching is synchronous; a reading is read before the next
// is made): allocating and zeroing them for each text cost more than filling them.
let UNITS = new Uint16Array(1024);
let FROM = new Int32Array(1024);
let TO = new Int32Array(1024);

// Ordinary words that hold a term's words joined: the legal name of the material in Italian, Spanish,
// Portuguese and French (`materiale pedopornografico`, `pédopornographie`), which reporting and moderation
// teams write. A squeezed match that starts such a word, written whole, is not the term.
const ORDINARY_WORDS = ['pedopornogra'];

/** The squeezed reading of `t` (lowercased), symbols read as letters or squeezed out. */
function squeeze(t: string, symbols: boolean): Reading {
  const n = t.length;
  if (UNITS.length < n) {
    UNITS = new Uint16Array(n);
    FROM = new Int32Array(n);
    TO = new Int32Array(n);
  }
  const units = UNITS;
  const from = FROM;
  const to = TO;
  let m = 0;
  for (let i = 0; i < n;) {
    let c = 0;
    let width = 1;
    const u = t.charCodeAt(i);
    if (symbols) {
      if (u < 0x80 && DIGRAPH_FIRST[u] === 1) {
        for (const [d, v] of DIGRAPHS) {
          if (t.startsWith(d, i)) {
            c = v;
            width = d.length;
            break;
          }
        }
      }
      if (c === 0) c = SYMBOLS[u]!;
    }
    // Letters and digits of other scripts (words.ts isWordUnit) read as themselves.
    if (c === 0) c = LETTERS[u]! || (u >= 0x80 && isWordUnit(u) ? u : 0);
    if (c !== 0) {
      units[m] = c;
      from[m] = i;
      to[m] = i + width;
      m++;
    }
    i += width;
  }
  let text = '';
  for (let k = 0; k < m; k += 8192) text += String.fromCharCode.apply(null, units.subarray(k, Math.min(m, k + 8192)) as unknown as number[]);
  return { text, from, to };
}

/** A term as the squeezed reading spells it (the letters of its words joined, as classes). */
export function squeezeTerm(term: string): { text: string; prefix: boolean } {
  const prefix = term.trim().endsWith('*');
  return { text: squeeze(term.replace(/\*$/, '').toLowerCase(), false).text, prefix };
}

export interface SqueezedTerm {
  detector: number;
  text: string;
  prefix: boolean;
}

/** The explicit block terms, read squeezed. */
export class SqueezedMatcher {
  constructor(readonly terms: readonly SqueezedTerm[]) {}

  /**
   * The terms found in `texts` (already normalised): per hit, the term's index in `terms` and the text's,
   * by text, then the symbols reading before the other, then by term (the compiled scanner's order too).
   */
  hits(texts: ReadonlyArray<{ text: string }>): number[] {
    const out: number[] = [];
    if (this.terms.length === 0) return out;
    texts.forEach(({ text }, slot) => {
      const t = text.toLowerCase();
      for (const symbols of [true, false]) {
        const r = squeeze(t, symbols);
        this.terms.forEach((term, k) => {
          if (found(t, r, term)) out.push(k, slot);
        });
      }
    });
    return out;
  }
}

/**
 * The tables and `terms` as the compiled scanner takes them (scanner/src/squeezed.rs `set`), one list of
 * UTF-16 units: the letter classes and the symbols as (unit, class) pairs, each list after its length; then
 * the digraphs (length, units, class), the ordinary words (length, units) and the terms (length, units,
 * prefix). So both engines read with one set of tables.
 */
export function describe(terms: readonly SqueezedTerm[]): Uint16Array {
  const out: number[] = [];
  const string = (s: string) => {
    if (s.length > 0xffff) throw new Error('squeezed: a term too long for the compiled scanner');
    out.push(s.length);
    for (let k = 0; k < s.length; k++) out.push(s.charCodeAt(k));
  };
  for (const table of [LETTERS, SYMBOLS]) {
    const pairs: number[] = [];
    table.forEach((v, u) => {
      if (v !== 0) pairs.push(u, v);
    });
    out.push(pairs.length / 2, ...pairs);
  }
  out.push(DIGRAPHS.length);
  for (const [d, v] of DIGRAPHS) {
    string(d);
    out.push(v);
  }
  out.push(ORDINARY_WORDS.length);
  for (const o of ORDINARY_WORDS) string(o);
  if (terms.length > 0xffff) throw new Error('squeezed: too many terms for the compiled scanner');
  out.push(terms.length);
  for (const t of terms) {
    string(t.text);
    out.push(t.prefix ? 1 : 0);
  }
  return Uint16Array.from(out);
}

function found(t: string, r: Reading, term: SqueezedTerm): boolean {
  const w = term.text;
  if (w.length === 0) return false;
  for (let k = r.text.indexOf(w); k >= 0; k = r.text.indexOf(w, k + 1)) {
    const start = r.from[k]!;
    if (isWordChar(t, start - 1)) continue;
    if (!term.prefix && isWordChar(t, r.to[k + w.length - 1]!)) continue;
    if (ORDINARY_WORDS.some((o) => t.startsWith(o, start))) continue;
    return true;
  }
  return false;
}
