/**
 * Words as the lexical classifier reads them, without making a string of every word: a request of half a
 * million characters holds around a hundred thousand words, and allocating each one costs more than the
 * rest of the matching together. A word is kept as its offsets and a 32-bit hash of its folded letters;
 * the few words whose hash a term shares are compared with it unit by unit, still without a string.
 *
 * Folding (the rules every term is compiled with too): lowercase; letters and digits of any script make
 * words, everything else separates them; `@`, `$` and apostrophes between letters join them (`s@rin` ->
 * `sarin`, `don't` -> `dont`); in a word that mixes letters and digits, leetspeak digits become letters
 * (`s4r1n` -> `sarin`; plain numbers and long hashes stay as they are); three or more single letters in a
 * row are one spelled-out word (`s a r i n`, `s.a.r.i.n`).
 *
 * A stream is reused from request to request (`reset`): its arrays are most of what a small request would
 * otherwise allocate.
 */

const LEET = new Map<number, number>([
  [0x30, 0x6f], // 0 -> o
  [0x31, 0x69], // 1 -> i
  [0x33, 0x65], // 3 -> e
  [0x34, 0x61], // 4 -> a
  [0x35, 0x73], // 5 -> s
  [0x37, 0x74], // 7 -> t
]);
// Longer mixed words are hashes and identifiers, not leetspeak.
const MAX_LEET_WORD = 24;
export const PREFIX_LENGTH = 3;

// Word characters beyond ASCII, decided once per code unit (letters and digits of every script).
const nonAsciiClass = new Uint8Array(65536); // 0 unknown, 1 word, 2 not a word
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;
export function isWordUnit(c: number): boolean {
  if (c < 0x80) return (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
  if (c >= 0xd800 && c <= 0xdfff) return false; // astral characters (emoji, symbols) separate words
  let k = nonAsciiClass[c]!;
  if (k === 0) nonAsciiClass[c] = k = LETTER_OR_DIGIT.test(String.fromCharCode(c)) ? 1 : 2;
  return k === 1;
}
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const joinerValue = (c: number): number => (c === 0x40 ? 0x61 : c === 0x24 ? 0x73 : c === 0x27 || c === 0x2019 ? 0 : -1);

/** Can the characters between two single letters be part of a spelled-out word (`s a r`, `s.a.r`, `s-a-r`)? */
function spelledGap(t: string, from: number, to: number): boolean {
  if (to - from > 2) return false;
  for (let k = from; k < to; k++) {
    const c = t.charCodeAt(k);
    if (c !== 0x20 && c !== 0x2e && c !== 0x2d && c !== 0x5f && c !== 0x2a) return false;
  }
  return true;
}

/** Word character `c` of a word with `flags` as it folds, or -1 when it folds to nothing. */
function foldUnit(c: number, flags: number): number {
  if (isWordUnit(c)) return flags === 1 ? (LEET.get(c) ?? c) : c;
  if (flags === 2) return -1; // separators between spelled-out letters
  const j = joinerValue(c);
  return j > 0 ? j : -1;
}

const FNV_OFFSET = 0x811c9dc5;
const fnv = (h: number, c: number): number => Math.imul(h ^ c, 0x01000193);

const INITIAL_CAPACITY = 1024;
// A stream grown past this many words (a request of several hundred kilobytes) is not kept for the next one.
const RETAINED_CAPACITY = 1 << 16;

/** The columns of a word stream: per word, what `add` records. */
export interface WordColumns {
  hash: Int32Array;
  prefix: Int32Array;
  length: Int32Array;
  text: Int32Array;
  start: Int32Array;
  end: Int32Array;
  flags: Uint8Array;
}

/** The words of one or more texts. Arrays grow as words are added. */
export class WordStream {
  count = 0;
  hash!: Int32Array;
  /** Hash of the first PREFIX_LENGTH folded units (0 when the word is shorter). */
  prefix!: Int32Array;
  length!: Int32Array;
  text!: Int32Array; // which text the word is in (0 for the first one added)
  /** Offset of each word's first unit in its own text (lexical.ts reports where `any` terms start). */
  start!: Int32Array;
  private end!: Int32Array;
  private flags!: Uint8Array; // 1 leet-folded, 2 spelled-out letters
  private readonly sources: string[] = []; // the texts, lowercased
  private own: WordColumns | undefined; // this stream's own columns while it holds adopted ones (adopt)

  constructor(capacity = INITIAL_CAPACITY) {
    this.allocate(capacity);
  }

  private allocate(cap: number): void {
    this.hash = new Int32Array(cap);
    this.prefix = new Int32Array(cap);
    this.length = new Int32Array(cap);
    this.text = new Int32Array(cap);
    this.start = new Int32Array(cap);
    this.end = new Int32Array(cap);
    this.flags = new Uint8Array(cap);
  }

  /**
   * Forgets every word and text (a reused stream must not keep a request's text alive), keeping the arrays
   * unless an unusually large request grew them. Adopted columns go back to their owner.
   */
  reset(): void {
    this.count = 0;
    this.sources.length = 0;
    if (this.own) {
      ({ hash: this.hash, prefix: this.prefix, length: this.length, text: this.text, start: this.start, end: this.end, flags: this.flags } = this.own);
      this.own = undefined;
    }
    if (this.hash.length > RETAINED_CAPACITY) this.allocate(INITIAL_CAPACITY);
  }

  /**
   * Takes the words another tokeniser found in `sources` (the compiled scanner, compiled.ts: columns that
   * are views of its memory, valid until its next pass) as if `add` had added each of them, in order, to
   * this empty stream. `sources` are the texts lowercased, as `add` keeps them.
   */
  adopt(sources: readonly string[], count: number, columns: WordColumns): void {
    if (this.count !== 0) throw new Error('WordStream.adopt: the stream is not empty');
    this.sources.push(...sources);
    this.count = count;
    this.own ??= { hash: this.hash, prefix: this.prefix, length: this.length, text: this.text, start: this.start, end: this.end, flags: this.flags };
    ({ hash: this.hash, prefix: this.prefix, length: this.length, text: this.text, start: this.start, end: this.end, flags: this.flags } = columns);
  }

  /**
   * Makes room for `words` words at once: a large request grew its arrays seven times over (each a fresh
   * zeroed allocation and a copy), a tenth of its scan.
   */
  reserve(words: number): void {
    let cap = this.hash.length;
    if (words <= cap) return;
    while (cap < words) cap *= 2;
    this.resize(cap);
  }

  private grow(): void {
    this.resize(this.hash.length * 2);
  }

  private resize(cap: number): void {
    const g32 = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    this.hash = g32(this.hash);
    this.prefix = g32(this.prefix);
    this.length = g32(this.length);
    this.text = g32(this.text);
    this.start = g32(this.start);
    this.end = g32(this.end);
    const f = new Uint8Array(cap);
    f.set(this.flags);
    this.flags = f;
  }

  /** Adds the words of `text` (already normalised; lowercased here), numbered as the next text. */
  add(original: string): void {
    const t = original.toLowerCase();
    const source = this.sources.length;
    this.sources.push(t);
    const n = t.length;
    let singles = 0; // consecutive single-letter words ending at the last word added
    let i = 0;
    while (i < n) {
      if (!isWordUnit(t.charCodeAt(i))) {
        i++;
        continue;
      }
      // One pass: the word's extent, whether it mixes letters and digits, and the hash of its units as
      // written (a leetspeak word, rare, is hashed again once stored).
      const start = i;
      let digits = 0;
      let units = 0;
      let h = FNV_OFFSET;
      let p = 0;
      while (i < n) {
        let c = t.charCodeAt(i);
        if (c >= 0x61 && c <= 0x7a) {
          // a lowercase ASCII letter, nearly always
        } else if (isWordUnit(c)) {
          if (isDigit(c)) digits++;
        } else {
          const j = joinerValue(c);
          if (j < 0 || i + 1 >= n || !isWordUnit(t.charCodeAt(i + 1))) break;
          if (j === 0) {
            i++;
            continue;
          }
          c = j;
        }
        i++;
        h = fnv(h, c);
        if (++units === PREFIX_LENGTH) p = h;
      }
      const leet = digits > 0 && digits < units && units <= MAX_LEET_WORD;
      const single = units === 1 && !isDigit(t.charCodeAt(start));
      // A spelled-out run ends at the first word that is not a single letter, and at a separator that is
      // more than a space or a dot (`s a r i n, s.a.r.i.n` is two words).
      if (single && singles > 0 && !spelledGap(t, this.end[this.count - 1]!, start)) {
        if (singles >= 3) this.collapse(singles);
        singles = 0;
      }
      if (!single && singles >= 3) this.collapse(singles);
      singles = single ? singles + 1 : 0;
      if (this.count === this.hash.length) this.grow();
      const w = this.count++;
      this.hash[w] = h;
      this.prefix[w] = p;
      this.length[w] = units;
      this.text[w] = source;
      this.start[w] = start;
      this.end[w] = i;
      this.flags[w] = leet ? 1 : 0;
      if (leet) this.rehash(w);
    }
    if (singles >= 3) this.collapse(singles);
  }

  /** Hashes word `w` again from its folded units (a leetspeak word: its digits read as letters). */
  private rehash(w: number): void {
    const t = this.sources[this.text[w]!]!;
    const flags = this.flags[w]!;
    let h = FNV_OFFSET;
    let len = 0;
    for (let k = this.start[w]!; k < this.end[w]!; k++) {
      const c = foldUnit(t.charCodeAt(k), flags);
      if (c < 0) continue;
      h = fnv(h, c);
      if (++len === PREFIX_LENGTH) this.prefix[w] = h;
    }
    this.hash[w] = h;
  }

  /** The last `run` words are single letters: replace them by one word of all of them. */
  private collapse(run: number): void {
    const first = this.count - run;
    const t = this.sources[this.text[first]!]!;
    let h = FNV_OFFSET;
    let p = 0;
    for (let w = first; w < this.count; w++) {
      h = fnv(h, t.charCodeAt(this.start[w]!));
      if (w - first + 1 === PREFIX_LENGTH) p = h;
    }
    this.hash[first] = h;
    this.prefix[first] = p;
    this.length[first] = run;
    this.end[first] = this.end[this.count - 1]!;
    this.flags[first] = 2;
    this.count = first + 1;
  }

  /** Is word `w` letters spelled out one by one and joined (`c h i l d`)? */
  spelled(w: number): boolean {
    return this.flags[w] === 2;
  }

  /** The folded string of word `w`. */
  word(w: number): string {
    const t = this.sources[this.text[w]!]!;
    const flags = this.flags[w]!;
    let s = '';
    for (let k = this.start[w]!; k < this.end[w]!; k++) {
      const c = foldUnit(t.charCodeAt(k), flags);
      if (c >= 0) s += String.fromCharCode(c);
    }
    return s;
  }

  /**
   * Does word `w` fold to `s` - or, with `prefix`, start with it? Unit by unit, without building the word
   * (its length, the number of its folded units, rules out most words at once).
   */
  matches(w: number, s: string, prefix: boolean): boolean {
    const length = this.length[w]!;
    if (prefix ? length < s.length : length !== s.length) return false;
    const t = this.sources[this.text[w]!]!;
    const flags = this.flags[w]!;
    const end = this.end[w]!;
    let m = 0;
    for (let k = this.start[w]!; k < end && m < s.length; k++) {
      const c = foldUnit(t.charCodeAt(k), flags);
      if (c >= 0 && c !== s.charCodeAt(m++)) return false;
    }
    return m === s.length;
  }
}

/** FNV-1a of a folded string, as WordStream hashes words. */
export function hashWord(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) h = fnv(h, s.charCodeAt(i));
  return h;
}

/** The folded words of a text, as strings (for compiling terms, and for tests). */
export function foldWords(text: string): string[] {
  const ws = new WordStream(64);
  ws.add(text);
  const out: string[] = [];
  for (let w = 0; w < ws.count; w++) out.push(ws.word(w));
  return out;
}
