/**
 * Laced secrets: a key with separators or markup put inside it so that no pattern sees it whole -
 * `sk-pr oj-Ab 12...`, a newline every few characters, `s k - p r o j`, `**AKIA**IOSF`, `AKIA-IOSF-ODNN-...`,
 * pieces in backticks or table cells, `<br>` or a literal `\n` between them. A reader (and a model) joins the
 * pieces back; so does this pass, before matching.
 *
 * Text is read as tokens (runs of `[A-Za-z0-9_-]`) and separator groups (whitespace, `*`, `` ` ``, `|`,
 * `>`, `~`, `.`, `,`, `;`, `:`, quotes, `<br>`, literal `\n`/`\r`/`\t`; at most 4 units in a group - a
 * longer gap ends the laced run, and so does a token longer than 32 characters). Only at a token where a secret's prefix can start (`sk`, an AWS prefix in
 * either case, `gh?_`, `github_pat_`, `npm_`, `glpat-`, `xox?-`, `sk_`/`rk_`, `AIza`, `hf_`) are the
 * following tokens joined, at most MAX_JOINED characters, in two readings: separators removed (`-` and `_`
 * kept, as real keys hold them) and separators, `-` and `_` all removed (dashes put in as separators). Each
 * reading is matched with the shapes' own patterns, anchored where the token starts; a fixed-length shape
 * must end where a token ends, a variable-length one is widened to the end of its last token. The hit covers
 * the original span, separators included.
 *
 * Cost: most tokens are rejected by their first one or two characters; a token that starts a prefix costs
 * at most MAX_JOINED characters of joining. Linear in the text.
 */
import type { SecretKind } from './types.js';

export interface LacedShape {
  kind: SecretKind;
  /** Pattern without lookarounds, matched sticky at the start of the joined reading. */
  re: RegExp;
  /** Which reading: 'kept' (separators removed, `-`/`_` kept) or 'bare' (those removed too). */
  reading: 'kept' | 'bare';
  /** A fixed-length shape must end exactly at the end of a token. */
  fixed: boolean;
  /** Extra check on the match; `kept` is the kept reading from the same token (the original's dashes). */
  accept?: (match: string, kept: string) => boolean;
}

export interface LacedHit {
  kind: SecretKind;
  start: number;
  end: number;
}

const MAX_JOINED = 600;
const MAX_GROUP = 4;
// Pieces of a laced key are short ("every few characters"); a longer token is a key written whole (the direct
// patterns see it) or a word, and joining past it would only glue the prose after a key onto it.
const MAX_PIECE = 32;

const isTokenCode = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x5f;
const isAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

// Separator characters: space, tab, CR, LF, * ` | > ~ . , ; : " '
const SEPARATOR = new Uint8Array(128);
for (const ch of ' \t\r\n*`|>~.,;:"\'') SEPARATOR[ch.charCodeAt(0)] = 1;

/** Length of the separator unit at `p` (a character, `<br>`, `<br/>`, `<br />`, a literal `\n`), or 0. */
function separatorAt(text: string, p: number): number {
  const c = text.charCodeAt(p);
  if (c < 128 && SEPARATOR[c] === 1) return 1;
  if (c === 0x5c) {
    const n = text.charCodeAt(p + 1);
    return n === 0x6e || n === 0x72 || n === 0x74 ? 2 : 0;
  }
  if (c === 0x3c && (text.charCodeAt(p + 1) | 0x20) === 0x62 && (text.charCodeAt(p + 2) | 0x20) === 0x72) {
    let q = p + 3;
    if (text.charCodeAt(q) === 0x20) q++;
    if (text.charCodeAt(q) === 0x2f) q++;
    return text.charCodeAt(q) === 0x3e ? q + 1 - p : 0;
  }
  return 0;
}

// Prefixes a laced secret can start with, by first character; a token starting a prefix is joined.
const PREFIXES = [
  'sk', 'rk_', 'gh', 'github_pat_', 'npm_', 'glpat-', 'xox', 'AIza', 'hf_',
  'AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'ASCA',
  'akia', 'asia', 'abia', 'acca', 'agpa', 'aida', 'aipa', 'anpa', 'anva', 'apka', 'aroa', 'asca',
];
const PREFIX_LENGTH = Math.max(...PREFIXES.map((p) => p.length));
const BY_FIRST = new Map<number, Array<{ kept: string; bare: string }>>();
for (const x of PREFIXES) {
  const list = BY_FIRST.get(x.charCodeAt(0)) ?? [];
  list.push({ kept: x, bare: x.replace(/[-_]/g, '') });
  BY_FIRST.set(x.charCodeAt(0), list);
}

interface Reading {
  text: string;
  /** Original offset of each joined character. */
  at: number[];
  /** Original end of the token each joined character belongs to. */
  tokenEnd: number[];
}

/**
 * The joined readings from the token at `start`, up to `limit` characters: separators dropped (kept), and
 * separators, `-` and `_` dropped (bare).
 */
function join(text: string, start: number, limit: number): { kept: Reading; bare: Reading; tokens: number } {
  const kept: Reading = { text: '', at: [], tokenEnd: [] };
  const bare: Reading = { text: '', at: [], tokenEnd: [] };
  const n = text.length;
  let p = start;
  let tokens = 0;
  while (p < n && kept.text.length < limit) {
    let e = p;
    while (e < n && isTokenCode(text.charCodeAt(e))) e++;
    if (e === p) break;
    tokens++;
    for (let i = p; i < e && kept.text.length < limit; i++) {
      const c = text.charCodeAt(i);
      kept.text += text[i];
      kept.at.push(i);
      kept.tokenEnd.push(e);
      if (isAlnum(c)) {
        bare.text += text[i];
        bare.at.push(i);
        bare.tokenEnd.push(e);
      }
    }
    // The separator group after the token: at most MAX_GROUP units, then another token.
    let q = e;
    let units = 0;
    for (let len = separatorAt(text, q); len > 0 && units <= MAX_GROUP; len = separatorAt(text, q)) {
      q += len;
      units++;
    }
    if (units === 0 || units > MAX_GROUP || q >= n || !isTokenCode(text.charCodeAt(q)) || e - p > MAX_PIECE) break;
    p = q;
  }
  return { kept, bare, tokens };
}

/**
 * Does the text from the token text[p, e) start a prefix, reading across separators? Decided by the token
 * alone when it is long enough (nearly always: `and`, `simple`); joined with the next tokens otherwise.
 */
function startsPrefix(text: string, p: number, e: number): boolean {
  const candidates = BY_FIRST.get(text.charCodeAt(p));
  if (!candidates) return false;
  let alnum = '';
  for (let i = p; i < e && alnum.length < PREFIX_LENGTH; i++) if (isAlnum(text.charCodeAt(i))) alnum += text[i];
  let needJoin = false;
  for (const x of candidates) {
    const k = Math.min(e - p, x.kept.length);
    if (text.startsWith(x.kept.slice(0, k), p)) {
      if (k === x.kept.length) return true;
      needJoin = true;
    }
    const b = Math.min(alnum.length, x.bare.length);
    if (alnum.startsWith(x.bare.slice(0, b))) {
      if (b === x.bare.length) return true;
      needJoin = true;
    }
  }
  if (!needJoin) return false;
  const { kept, bare } = join(text, p, PREFIX_LENGTH);
  return candidates.some((x) => kept.text.startsWith(x.kept) || bare.text.startsWith(x.bare));
}

/** Secrets written with separators inside them, as spans of `text`. */
export function findLaced(text: string, shapes: readonly LacedShape[], hits: LacedHit[]): void {
  const n = text.length;
  let p = 0;
  while (p < n) {
    const c = text.charCodeAt(p);
    if (!isTokenCode(c)) {
      p++;
      continue;
    }
    const tokenStart = p;
    const atWordStart = tokenStart === 0 || !isAlnum(text.charCodeAt(tokenStart - 1));
    while (p < n && isTokenCode(text.charCodeAt(p))) p++;
    // A token that continues with letters past a prefix's length (`simple`, `Also`) starts none.
    if (!atWordStart || !startsPrefix(text, tokenStart, p)) continue;
    const readings = join(text, tokenStart, MAX_JOINED);
    let matchedEnd = -1;
    for (const shape of shapes) {
      const r = shape.reading === 'kept' ? readings.kept : readings.bare;
      shape.re.lastIndex = 0;
      const m = shape.re.exec(r.text);
      if (!m || m.index !== 0 || m[0].length === 0) continue;
      const last = m[0].length - 1;
      const end = r.tokenEnd[last]!;
      if (shape.fixed && r.at[last]! + 1 !== end) continue;
      if (shape.accept && !shape.accept(m[0], readings.kept.text)) continue;
      hits.push({ kind: shape.kind, start: tokenStart, end });
      matchedEnd = Math.max(matchedEnd, end);
    }
    if (matchedEnd > p) p = matchedEnd;
  }
}
