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
 */

// Letter classes: what each character reads as (absent: squeezed out).
const LETTER_CLASS = new Map<number, number>();
const cls = (chars: string, to: string) => {
  for (const ch of chars) LETTER_CLASS.set(ch.codePointAt(0)!, to.charCodeAt(0));
};
cls('il1', 'i');
cls('oa04', 'o');
cls('s5', 's');
cls('e3', 'e');
cls('t7', 't');
// Symbols that stand for letters (the first reading only).
const SYMBOL_CLASS = new Map<number, number>();
const sym = (chars: string, to: string) => {
  for (const ch of chars) SYMBOL_CLASS.set(ch.codePointAt(0)!, to.charCodeAt(0));
};
sym('!|¡', 'i');
sym('@°', 'o');
sym('$', 's');
sym('#', 'h');
sym('(<', 'c');
// Symbols that read as one letter together (before the single symbols).
const DIGRAPHS: ReadonlyArray<readonly [string, number]> = [
  ['()', 0x6f],
  ['[]', 0x6f],
  ['{}', 0x6f],
  ['|-|', 0x68],
  ['|\\|', 0x6e],
];

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const isWordChar = (t: string, i: number): boolean => i >= 0 && i < t.length && LETTER_OR_DIGIT.test(t[i]!);

interface Reading {
  text: string;
  /** Per squeezed unit: 1 when its character starts a word (no letter or digit before it), 2 when it ends one. */
  edges: Uint8Array;
  /** Per squeezed unit, the offset of its character in the text. */
  from: Int32Array;
}

// Ordinary words that hold a term's words joined: the legal name of the material in Italian, Spanish,
// Portuguese and French (`materiale pedopornografico`, `pédopornographie`), which reporting and moderation
// teams write. A squeezed match that starts such a word, written whole, is not the term.
const ORDINARY_WORDS = ['pedopornogra'];

/** The squeezed reading of `t` (lowercased), symbols read as letters or squeezed out. */
function squeeze(t: string, symbols: boolean): Reading {
  const n = t.length;
  const units = new Uint16Array(n);
  const edges = new Uint8Array(n);
  const from = new Int32Array(n);
  let m = 0;
  for (let i = 0; i < n;) {
    let c = -1;
    let width = 1;
    const u = t.charCodeAt(i);
    if (symbols) {
      for (const [d, v] of DIGRAPHS) {
        if (u === d.charCodeAt(0) && t.startsWith(d, i)) {
          c = v;
          width = d.length;
          break;
        }
      }
      if (c < 0) c = SYMBOL_CLASS.get(u) ?? -1;
    }
    if (c < 0) c = LETTER_CLASS.get(u) ?? -1;
    if (c < 0 && ((u >= 0x61 && u <= 0x7a) || (u >= 0x30 && u <= 0x39) || (u >= 0x80 && LETTER_OR_DIGIT.test(t[i]!)))) c = u;
    if (c >= 0) {
      units[m] = c;
      edges[m] = (isWordChar(t, i - 1) ? 0 : 1) | (isWordChar(t, i + width) ? 0 : 2);
      from[m] = i;
      m++;
    }
    i += width;
  }
  let text = '';
  for (let k = 0; k < m; k += 8192) text += String.fromCharCode.apply(null, units.subarray(k, Math.min(m, k + 8192)) as unknown as number[]);
  return { text, edges: edges.subarray(0, m), from: from.subarray(0, m) };
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
  constructor(private readonly terms: readonly SqueezedTerm[]) {}

  /** Calls `hit(detector, slot)` for each term found in text `slot` (texts already normalised). */
  match(texts: ReadonlyArray<{ text: string }>, hit: (detector: number, slot: number) => void): void {
    if (this.terms.length === 0) return;
    texts.forEach(({ text }, slot) => {
      const t = text.toLowerCase();
      for (const symbols of [true, false]) {
        const r = squeeze(t, symbols);
        for (const term of this.terms) if (found(t, r, term)) hit(term.detector, slot);
      }
    });
  }
}

function found(t: string, r: Reading, term: SqueezedTerm): boolean {
  const w = term.text;
  if (w.length === 0) return false;
  for (let k = r.text.indexOf(w); k >= 0; k = r.text.indexOf(w, k + 1)) {
    if ((r.edges[k]! & 1) === 0) continue;
    if (!term.prefix && (r.edges[k + w.length - 1]! & 2) === 0) continue;
    if (ORDINARY_WORDS.some((o) => t.startsWith(o, r.from[k]!))) continue;
    return true;
  }
  return false;
}
