/**
 * Laced secrets: a key with separators or markup put inside it so that no pattern sees it whole -
 * `sk-pr oj-Ab 12...`, a newline every few characters, `s k - p r o j`, `**AKIA**IOSF`, `AKIA-IOSF-ODNN-...`,
 * pieces in backticks or table cells, `<br>` or a literal `\n` between them. A reader (and a model) joins the
 * pieces back; so does this pass, before matching.
 *
 * Text is read as tokens (runs of `[A-Za-z0-9_-]`) and separator groups (whitespace, `*`, `` ` ``, `|`,
 * `>`, `~`, `.`, `,`, `;`, `:`, quotes, `/`, `\`, `+`, `^`, `=`, `#`, brackets, `<`, `<br>`, literal
 * `\n`/`\r`/`\t`; at most 4 units in a group - a
 * longer gap ends the laced run, and so does a token longer than 32 characters). Only at a token where a secret's prefix can start (`sk`, an AWS prefix in
 * either case, `gh?_`, `github_pat_`, `npm_`, `glpat-`, `xox?-`, `sk_`/`rk_`, `AIza`, `hf_`) are the
 * following tokens joined, as many characters as the longest shape after that prefix needs, in two readings: separators removed (`-` and `_`
 * kept, as real keys hold them) and separators, `-` and `_` all removed (dashes put in as separators); and,
 * for a provider's shape that holds `-` or `_` of its own and found nothing in those, two more: one of the two
 * removed and the other kept (a key laced with dashes whose body holds an underscore, `AIza7fn-8rW3fAo-SO_7cf3-…`;
 * one laced with underscores, one of them inside its prefix, `glpa_t-79_98Pm_…`). Each
 * reading is matched with the shapes' own patterns, anchored where the token starts; a fixed-length shape
 * must end where a token ends, a variable-length one is widened to the end of its last token. The hit covers
 * the original span, separators included.
 *
 * Cost: most tokens are rejected by their first one or two characters; a token that starts a prefix costs
 * at most 256 characters of joining (24 after an AWS prefix). Linear in the text.
 */
import type { SecretKind } from './types.js';

export interface LacedShape {
  kind: SecretKind;
  /** The prefixes (of PREFIXES below) this shape can start with: only those anchors try it. */
  prefixes: readonly string[];
  /** Pattern without lookarounds, matched sticky at the start of the joined reading. */
  re: RegExp;
  /**
   * Which reading: 'kept' (separators removed, `-`/`_` kept), 'bare' (those removed too), or one of them
   * removed and the other kept ('no-dash', 'no-underscore': tried at a token only when the other shapes
   * found nothing there, so they add keys and change no other hit).
   */
  reading: 'kept' | 'bare' | 'no-dash' | 'no-underscore';
  /** A fixed-length shape must end exactly at the end of a token. */
  fixed: boolean;
  /** Extra check on the match; `kept` is the kept reading from the same token (the original's dashes). */
  accept?: (match: string, kept: string) => boolean;
  /**
   * What the kept reading starts with whenever the shape is reported: one of these (from its expression,
   * or from what `accept` asks of `kept`). A token whose reading starts with none of its shapes' leads is
   * not joined at all: no shape could be reported from it. Absent: any reading may be.
   */
  leads?: readonly string[];
  /**
   * Pieces that, whole and after the first, say the reading is a list rather than a key: an AWS id whose
   * body is laced from other AWS prefixes (`AKIA|ASIA|ABIA|ACCA`, a detection rule or documentation) is none.
   */
  notPieces?: ReadonlySet<string>;
}

type Reading = LacedShape['reading'];

/** The unit a reading drops besides the separators: -1 none ('kept'), -2 both `-` and `_` ('bare'). */
const DROPS: Record<Reading, number> = { kept: -1, bare: -2, 'no-dash': 0x2d, 'no-underscore': 0x5f };
/** Does a token unit `c` count in a reading that drops `drop`? */
const counts = (c: number, drop: number): boolean => (drop === -2 ? c !== 0x2d && c !== 0x5f : c !== drop);

export interface LacedHit {
  kind: SecretKind;
  start: number;
  end: number;
}

const MAX_GROUP = 4;
// Pieces of a laced key are short ("every few characters") or lines of a key wrapped at a column (64, 76); a
// longer token is a key written whole (the direct patterns see it), and joining past it would only glue the
// prose after a key onto it (keyEnd below keeps the prose after a whole key out of the hit).
const MAX_PIECE = 80;

export const isTokenCode = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x5f;
const isAlnum = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

// Separator characters: space, tab, CR, LF, * ` | > ~ . , ; : " ' and the punctuation a key is laced with
// as readily (/ \ + ^ = # ( ) [ ] <). Dot and space look-alikes (`·`, `•`, U+1680) are folded to `.` and
// space by normalisation (homoglyphs.ts) before this reads them. A separator only joins pieces after a token
// that starts a known prefix (`sk`, `gh`, `AKIA` ...), so base64 and paths, which hold `/`, `+` and `=`, are not
// read as laced keys unless a piece starts so and the joined reading is a whole key of a known shape.
const SEPARATOR = new Uint8Array(128);
for (const ch of ' \t\r\n*`|>~.,;:"\'/\\+^=#()[]<') SEPARATOR[ch.charCodeAt(0)] = 1;

/** Length of the separator unit at `p` (a character, `<br>`, `<br/>`, `<br />`, a literal `\n`), or 0. */
function separatorAt(text: string, p: number): number {
  const c = text.charCodeAt(p);
  // A written line break before the single characters that start one (`\`, `<`).
  if (c === 0x5c) {
    const n = text.charCodeAt(p + 1);
    if (n === 0x6e || n === 0x72 || n === 0x74) return 2;
  }
  if (c === 0x3c && (text.charCodeAt(p + 1) | 0x20) === 0x62 && (text.charCodeAt(p + 2) | 0x20) === 0x72) {
    let q = p + 3;
    if (text.charCodeAt(q) === 0x20) q++;
    if (text.charCodeAt(q) === 0x2f) q++;
    if (text.charCodeAt(q) === 0x3e) return q + 1 - p;
  }
  return c < 128 && SEPARATOR[c] === 1 ? 1 : 0;
}

/**
 * Where the next piece of a laced run starts after the token ending at `p`: past a group of 1 to MAX_GROUP
 * separator units, at a token character. -1 when no such group follows, and the run ends at `p`.
 */
export function nextPiece(text: string, p: number): number {
  let q = p;
  let units = 0;
  for (let len = separatorAt(text, q); len > 0 && units <= MAX_GROUP; len = separatorAt(text, q)) {
    q += len;
    units++;
  }
  return units === 0 || units > MAX_GROUP || q >= text.length || !isTokenCode(text.charCodeAt(q)) ? -1 : q;
}

// Prefixes a laced secret can start with, and how many joined characters the longest shape after each needs.
export const PREFIXES: ReadonlyArray<readonly [string, number]> = [
  ['sk', 256],
  ['rk_', 256],
  ['gh', 48],
  ['github_pat_', 96],
  ['npm_', 48],
  ['glpat-', 72],
  ['xox', 256],
  ['AIza', 48],
  ['hf_', 48],
  ...['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'ASCA'].flatMap((p): Array<readonly [string, number]> => [
    [p, 24],
    [p.toLowerCase(), 24],
  ]),
];
const BY_FIRST = new Map<number, Array<{ kept: string; bare: string; limit: number; upper: boolean }>>();
for (const [x, limit] of PREFIXES) {
  const list = BY_FIRST.get(x.charCodeAt(0)) ?? [];
  list.push({ kept: x, bare: x.replace(/[-_]/g, ''), limit, upper: x === x.toUpperCase() });
  BY_FIRST.set(x.charCodeAt(0), list);
}

/** The tokens laced together from the token at `start`, until `limit` characters or the run ends. */
function laceFrom(text: string, start: number, limit: number): number[] {
  const bounds: number[] = []; // start, end of each token
  const n = text.length;
  let p = start;
  let length = 0;
  while (p < n && length < limit) {
    let e = p;
    while (e < n && isTokenCode(text.charCodeAt(e))) e++;
    if (e === p) break;
    bounds.push(p, e);
    length += e - p;
    const q = nextPiece(text, e);
    if (q < 0 || e - p > MAX_PIECE) break;
    p = q;
  }
  return bounds;
}

const keptOf = (text: string, bounds: readonly number[]): string => {
  let out = '';
  for (let k = 0; k < bounds.length; k += 2) out += text.slice(bounds[k], bounds[k + 1]);
  return out;
};
const JOINERS = /[-_]/g;
/** A kept reading as `reading` reads it. */
const readingOf = (kept: string, reading: Reading): string =>
  reading === 'kept' ? kept : reading === 'bare' ? kept.replace(JOINERS, '') : kept.replaceAll(reading === 'no-dash' ? '-' : '_', '');

/**
 * The original offset just after the `count`-th character of a reading, and the end of its token: in the
 * kept reading every token character counts, in the bare one only letters and digits, in the others all but
 * the one they drop.
 */
function mapBack(text: string, bounds: readonly number[], count: number, reading: Reading): { at: number; tokenEnd: number } {
  const drop = DROPS[reading];
  let left = count;
  for (let k = 0; k < bounds.length; k += 2) {
    for (let i = bounds[k]!; i < bounds[k + 1]!; i++) {
      if (!counts(text.charCodeAt(i), drop)) continue;
      if (--left === 0) return { at: i + 1, tokenEnd: bounds[k + 1]! };
    }
  }
  const last = bounds[bounds.length - 1]!;
  return { at: last, tokenEnd: last };
}

/**
 * What findLaced read at one token start: the reading of the units from it, not the loop's state around it
 * (the tokens passed, the long joins counted), so that another text holding the same units from there reads
 * the same. Offsets are from the token start.
 */
export interface LacedReading {
  /** The joined length the prefixes found there need (prefixesAt); 0: no prefix, nothing else is set. */
  limit: number;
  /** Whether some shape of those prefixes may lead from the token (mayLead): then it was joined. */
  joined: boolean;
  /** With `joined`: where the join ended, and each hit's kind and end. */
  laceEnd: number;
  hits: Array<{ kind: SecretKind; end: number }>;
  /**
   * One past the last unit the reading may have looked at (the furthest place it stopped at, and LOOKAHEAD):
   * a text that holds the same units up to there, and does not end before, reads the same.
   */
  reach: number;
}

/**
 * Readings findLaced keeps (`keep`, by token start, only those that end inside the text) or takes from a
 * reading made before (`reuse`: the reading at a token start that another text, holding the same units there,
 * made; undefined when none is known). Both for LACED in secrets.ts only: a reading depends on the shapes.
 */
export interface LacedMemo {
  keep?: Map<number, LacedReading>;
  reuse?: (p: number) => LacedReading | undefined;
}

// The second characters of the prefixes by first character: a token whose second character is a letter or
// digit outside this set (nearly every word) starts no prefix, decided without reading further.
const SECOND = new Map<number, Set<number>>();
for (const [x] of PREFIXES) {
  const set = SECOND.get(x.charCodeAt(0)) ?? new Set<number>();
  set.add(x.charCodeAt(1));
  const bareSecond = x.replace(/[-_]/g, '').charCodeAt(1);
  if (bareSecond) set.add(bareSecond);
  SECOND.set(x.charCodeAt(0), set);
}

const LEAD = Math.max(...PREFIXES.map(([x]) => x.length));

// The leads prefixesAt compares, as code units: every token start of a text is checked, so no string is
// made for them (findLaced is synchronous; each call overwrites them).
const KEPT_LEAD = new Uint16Array(LEAD);
const BARE_LEAD = new Uint16Array(LEAD);
// The leads of the readings that drop one joiner, read only for a token where a shape of theirs is tried.
const DROP_LEAD = new Uint16Array(LEAD);

/**
 * The first `max` characters the text from `p` reads as across separators (`bare`: with `-`/`_` skipped
 * too; a unit: with that one skipped), stopping at the end of the laced run, written into `out` as code units;
 * returns its length. Character by character, so no string is made (test/guard/scan-sharing.test.ts holds it
 * to a piece-by-piece reading).
 */
export function leadInto(text: string, p: number, max: number, bare: boolean | number, out: Uint16Array): number {
  const drop = bare === true ? -2 : bare === false ? -1 : bare;
  const n = text.length;
  let length = 0;
  let i = p;
  while (length < max && i < n) {
    const c = text.charCodeAt(i);
    if (isTokenCode(c)) {
      if (counts(c, drop)) out[length++] = c;
      i++;
      continue;
    }
    const q = nextPiece(text, i);
    if (q < 0) break;
    i = q;
  }
  if (i > readTo) readTo = i;
  return length;
}

/**
 * The lead of the reading from `p` without the unit `drop` into DROP_LEAD, given the kept lead (KEPT_LEAD,
 * `keptLength` units): that lead itself when it holds no such unit, else read again. Returns its length.
 */
function dropLeadInto(text: string, p: number, keptLength: number, drop: number): number {
  for (let k = 0; k < keptLength; k++) if (KEPT_LEAD[k] === drop) return leadInto(text, p, LEAD, drop, DROP_LEAD);
  DROP_LEAD.set(KEPT_LEAD);
  return keptLength;
}

/**
 * How far past the last offset a reading stopped at (a token's end, where leadInto stopped) it may have
 * looked: nextPiece reads at most five separator units of up to six units each (`<br />`), and then one.
 */
const LOOKAHEAD = 64;

// The furthest offset the reading at one token start stopped at (leadInto, laceFrom), for LacedReading's
// `reach`; set to the token start before each reading (findLaced is synchronous).
let readTo = 0;

const startsWithUnits = (units: Uint16Array, length: number, s: string): boolean => {
  if (length < s.length) return false;
  for (let k = 0; k < s.length; k++) if (units[k] !== s.charCodeAt(k)) return false;
  return true;
};

/** Are units[from, length) all of an AWS id's alphabet (upper: capitals and digits; else a-z and 2-7)? */
function awsTail(units: Uint16Array, from: number, length: number, upper: boolean): boolean {
  for (let k = from; k < length; k++) {
    const c = units[k]!;
    const ok = upper ? (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) : (c >= 0x61 && c <= 0x7a) || (c >= 0x32 && c <= 0x37);
    if (!ok) return false;
  }
  return true;
}

/**
 * The prefixes that start at `p` (reading across separators), with the joined length they need, and how
 * many units of the kept reading KEPT_LEAD holds (at most LEAD: fewer when the laced run ends sooner).
 */
function prefixesAt(text: string, p: number): { limit: number; prefixes: string[]; keptLength: number } | null {
  const candidates = BY_FIRST.get(text.charCodeAt(p));
  if (!candidates) return null;
  const second = text.charCodeAt(p + 1);
  if (isAlnum(second) && !SECOND.get(text.charCodeAt(p))!.has(second)) return null;
  // The second unit looked at above, and what leadInto reads below (it moves readTo on).
  if (p + 1 > readTo) readTo = p + 1;
  const keptLength = leadInto(text, p, LEAD, false, KEPT_LEAD);
  let bareLength = -1;
  let limit = 0;
  let prefixes: string[] | null = null;
  for (const x of candidates) {
    if (!startsWithUnits(KEPT_LEAD, keptLength, x.kept)) {
      if (bareLength < 0) bareLength = leadInto(text, p, LEAD, true, BARE_LEAD);
      if (!startsWithUnits(BARE_LEAD, bareLength, x.bare)) continue;
    }
    if (bareLength < 0) bareLength = leadInto(text, p, LEAD, true, BARE_LEAD);
    // An AWS key id continues in its own alphabet (capitals and digits, or the lower-case base32 letters):
    // the characters read so far after the prefix decide most candidates (`AKIA sk-proj` is none).
    if (x.limit === 24 && !awsTail(BARE_LEAD, 4, bareLength, x.upper)) continue;
    (prefixes ??= []).push(x.kept);
    limit = Math.max(limit, x.limit);
  }
  return limit > 0 ? { limit, prefixes: prefixes!, keptLength } : null;
}

/**
 * May the reading whose first units `units` holds (`length` of them, LEAD when it goes on) start with one
 * of `shape`'s leads? A lead longer than LEAD is compared as far as the units reach.
 */
function mayLead(shape: LacedShape, units: Uint16Array, length: number): boolean {
  const leads = shape.leads;
  if (!leads) return true;
  for (const lead of leads) {
    if (lead.length > length && length < LEAD) continue;
    let k = 0;
    while (k < lead.length && k < length && units[k] === lead.charCodeAt(k)) k++;
    if (k === lead.length || k === length) return true;
  }
  return false;
}

// Past this many long joins in one text (adversarial input: `sk-proj ` repeated), a token inside the span of
// the previous long join is not joined again: the cost stays linear, and what is skipped was read in a join.
const MAX_LONG_JOINS = 256;
// First characters of the prefixes that need no long join (AWS ids, either case): a token starting with any
// other character needs a long join if it starts a prefix at all.
const SHORT_FIRST = new Set(PREFIXES.filter(([, limit]) => limit <= 24).map(([x]) => x.charCodeAt(0)));

// Where a prefix may start: a word start, then the first two characters of some prefix with at most a
// separator group between them (lower-case AWS prefixes only written whole: `a` starts too many words). Found by the regular expression engine, which reads prose far faster than a
// loop would; each candidate is then checked in full (prefixesAt).
const SEP = String.raw`(?:<br ?\/?>|\\[nrt]|[ \t\r\n*|>~.,;:"'_\x60/\\+^=#()[\]<-]){0,4}`;
const ANCHOR = new RegExp(
  String.raw`(?<![A-Za-z0-9_-])(?:s${SEP}k|r${SEP}k|g${SEP}[hli]|n${SEP}p|x${SEP}o|h${SEP}f|A${SEP}[IKSBCGNPR]|a(?:kia|sia|bia|cca|gpa|ida|ipa|npa|nva|pka|roa|sca))`,
  'g',
);

const byPrefixCache = new WeakMap<readonly LacedShape[], Map<string, LacedShape[]>>();
function shapesByPrefix(shapes: readonly LacedShape[]): Map<string, LacedShape[]> {
  let m = byPrefixCache.get(shapes);
  if (!m) {
    m = new Map();
    for (const shape of shapes) for (const x of shape.prefixes) m.set(x, [...(m.get(x) ?? []), shape]);
    byPrefixCache.set(shapes, m);
  }
  return m;
}

const WORD = /^[A-Za-z][a-z]{1,23}$/;

/** Does a piece read as part of a key (letters and digits mixed), not as a word of the prose after one? */
function keyLike(text: string, s: number, e: number): boolean {
  let digit = false;
  let letter = false;
  let upper = 0;
  let lower = 0;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x30 && c <= 0x39) {
      digit = true;
    } else if (c >= 0x41 && c <= 0x5a) {
      letter = true;
      upper++;
    } else if (c >= 0x61 && c <= 0x7a) {
      letter = true;
      lower++;
    }
  }
  return (digit && letter) || (e - s >= 8 && upper > 1 && lower > 0);
}

/**
 * Where a variable-length key that starts at the first token ends. When that token is a whole key of the
 * shape already (the key written out, prose after it: `use sk_live_... and then deploy`), the following
 * pieces belong to it only while they read as key material; otherwise the joined reading decides.
 */
function keyEnd(text: string, bounds: readonly number[], shape: LacedShape): number {
  const last = bounds[bounds.length - 1]!;
  if (bounds.length <= 2) return last;
  const first = text.slice(bounds[0], bounds[1]);
  const reading = readingOf(first, shape.reading);
  shape.re.lastIndex = 0;
  const m = shape.re.exec(reading);
  if (!m || m.index !== 0 || m[0].length !== reading.length || (shape.accept && !shape.accept(m[0], first))) {
    // Pieces joined from a shorter first token: trailing words (`... and then deploy`) are prose, not key.
    let k = bounds.length - 2;
    while (k >= 2 && WORD.test(text.slice(bounds[k], bounds[k + 1]))) k -= 2;
    return bounds[k + 1]!;
  }
  let end = bounds[1]!;
  for (let k = 2; k < bounds.length && keyLike(text, bounds[k]!, bounds[k + 1]!); k += 2) end = bounds[k + 1]!;
  return end;
}

/** Is one of the tokens after the first, up to `at`, one of `pieces`? */
function hasPiece(text: string, bounds: readonly number[], at: number, pieces: ReadonlySet<string>): boolean {
  for (let k = 2; k < bounds.length && bounds[k + 1]! <= at; k += 2) if (pieces.has(text.slice(bounds[k], bounds[k + 1]))) return true;
  return false;
}

/**
 * The token starts findLaced reads: where ANCHOR matches and prefixesAt finds a prefix, ascending. (ANCHOR's
 * lookbehind puts every match at a token start, so a match prefixesAt rejects moves nothing in findLaced's
 * loop: a list of the others, such as the compiled scanner's, reads the same.)
 */
export function lacedCandidates(text: string): number[] {
  const out: number[] = [];
  const re = ANCHOR;
  re.lastIndex = 0;
  for (let a: RegExpExecArray | null; (a = re.exec(text)) !== null;) {
    re.lastIndex = a.index + 1;
    if (prefixesAt(text, a.index)) out.push(a.index);
  }
  return out;
}

/**
 * Secrets written with separators inside them, as spans of `text`. `candidates`, when given, lists the token
 * starts to read (lacedCandidates, from another engine) instead of the search here; `memo`, the readings at
 * token starts to keep, or to take from another text's (the boundary pass's joined request reads most of its
 * token starts as its texts did: it joins and matches only where a text's reading ran to that text's end).
 */
export function findLaced(text: string, shapes: readonly LacedShape[], hits: LacedHit[], candidates?: ArrayLike<number>, memo?: LacedMemo): void {
  const n = text.length;
  let p = 0;
  let longJoins = 0;
  let longEnd = -1;
  // The shared pattern, rewound: building one per call cost more than reading a short decoded text with it,
  // and nothing called from this loop uses it.
  const re = ANCHOR;
  re.lastIndex = 0;
  let k = 0; // the next of `candidates`
  const next = (from: number): number => {
    if (!candidates) {
      re.lastIndex = from;
      return re.exec(text)?.index ?? -1;
    }
    while (k < candidates.length && candidates[k]! < from) k++;
    return k < candidates.length ? candidates[k++]! : -1;
  };
  const byPrefix = shapesByPrefix(shapes);
  // The long joins not made (no shape could lead from their token): where each would have ended is asked
  // only past the budget, of all of them at once (longEndNow), so the budget is spent as if they were made.
  const unmade: number[] = []; // token start, limit
  const longEndNow = (): number => {
    for (let k = 0; k < unmade.length; k += 2) {
      const b = laceFrom(text, unmade[k]!, unmade[k + 1]!);
      longEnd = Math.max(longEnd, b[b.length - 1]!);
    }
    unmade.length = 0;
    return longEnd;
  };
  let from = 0;
  for (let tokenStart: number; (tokenStart = next(from)) >= 0;) {
    from = tokenStart + 1;
    if (tokenStart < p) continue;
    p = tokenStart;
    while (p < n && isTokenCode(text.charCodeAt(p))) p++;
    // Past the long-join budget, inside the last long join, a token whose every prefix needs a long join is
    // skipped whatever prefixesAt would say: decided by its first character, without reading the prefix.
    if (longJoins >= MAX_LONG_JOINS && tokenStart < longEndNow() && !SHORT_FIRST.has(text.charCodeAt(tokenStart))) continue;
    // The reading at this token start, made before in a text holding the same units (the boundary pass's
    // joined request reuses its texts' own), or made here: the loop's steps below are the same either way.
    const known = memo?.reuse?.(tokenStart);
    readTo = tokenStart;
    const found = known ? null : prefixesAt(text, tokenStart);
    const limit = known ? known.limit : (found?.limit ?? 0);
    if (limit === 0) {
      keep(memo, tokenStart, n, { limit: 0, joined: false, laceEnd: 0, hits: [], reach: readTo + LOOKAHEAD - tokenStart });
      continue;
    }
    if (limit > 24) {
      if (longJoins >= MAX_LONG_JOINS && tokenStart < longEndNow()) continue;
      longJoins++;
    }
    const reading = known ?? read(text, tokenStart, found!, byPrefix);
    if (!known) keep(memo, tokenStart, n, reading);
    if (!reading.joined) {
      if (limit > 24) unmade.push(tokenStart, limit);
      from = Math.max(from, p);
      continue;
    }
    if (limit > 24) longEnd = Math.max(longEnd, tokenStart + reading.laceEnd);
    let matchedEnd = -1;
    for (const h of reading.hits) {
      const end = tokenStart + h.end;
      hits.push({ kind: h.kind, start: tokenStart, end });
      matchedEnd = Math.max(matchedEnd, end);
    }
    if (matchedEnd > p) p = matchedEnd;
    from = Math.max(from, p);
  }
}

/** Keeps `reading` (made at `start` of a text of `n` units) in `memo` when it ends inside the text. */
function keep(memo: LacedMemo | undefined, start: number, n: number, reading: LacedReading): void {
  if (memo?.keep && start + reading.reach <= n) memo.keep.set(start, reading);
}

/** The reading at `tokenStart`, where prefixesAt `found` its prefixes: joined and matched when a shape may lead. */
function read(
  text: string,
  tokenStart: number,
  found: { limit: number; prefixes: string[]; keptLength: number },
  byPrefix: ReadonlyMap<string, LacedShape[]>,
): LacedReading {
  const { limit, prefixes, keptLength } = found;
  // The shapes these prefixes start, each once, in order; none of them may lead from this token (a word
  // such as `sklearn` or `npmjs`): nothing is joined, as nothing would match.
  const tried = new Set<LacedShape>();
  for (const x of prefixes) for (const shape of byPrefix.get(x) ?? []) tried.add(shape);
  let leads = false;
  let dropped = 0; // the unit DROP_LEAD was read without, and its length
  let droppedLength = 0;
  for (const shape of tried) {
    const drop = DROPS[shape.reading];
    if (drop < 0) leads = mayLead(shape, KEPT_LEAD, keptLength);
    else {
      if (dropped !== drop) droppedLength = dropLeadInto(text, tokenStart, keptLength, (dropped = drop));
      leads = mayLead(shape, DROP_LEAD, droppedLength);
    }
    if (leads) break;
  }
  if (!leads) return { limit, joined: false, laceEnd: 0, hits: [], reach: readTo + LOOKAHEAD - tokenStart };
  const bounds = laceFrom(text, tokenStart, limit);
  const laceEnd = bounds[bounds.length - 1]!;
  if (laceEnd > readTo) readTo = laceEnd;
  const kept = keptOf(text, bounds);
  let bare: string | null = null;
  let noDash: string | null = null;
  let noUnderscore: string | null = null;
  const hits: LacedReading['hits'] = [];
  // The readings that drop one joiner in a second round, only where the first found nothing.
  for (let round = 0; round < 2 && hits.length === 0; round++) {
    for (const shape of tried) {
      const drop = DROPS[shape.reading];
      if (drop >= 0 !== (round === 1)) continue;
      if (drop >= 0) {
        // Only a shape whose lead this reading starts with (most tokens of a long join: none).
        if (dropped !== drop) droppedLength = dropLeadInto(text, tokenStart, keptLength, (dropped = drop));
        if (!mayLead(shape, DROP_LEAD, droppedLength)) continue;
      }
      const r = shape.reading;
      const reading =
        r === 'kept'
          ? kept
          : r === 'bare'
            ? (bare ??= readingOf(kept, r))
            : r === 'no-dash'
              ? (noDash ??= readingOf(kept, r))
              : (noUnderscore ??= readingOf(kept, r));
      shape.re.lastIndex = 0;
      const m = shape.re.exec(reading);
      if (!m || m.index !== 0 || m[0].length === 0) continue;
      if (shape.accept && !shape.accept(m[0], kept)) continue;
      const { at, tokenEnd } = mapBack(text, bounds, m[0].length, shape.reading);
      if (shape.fixed && at !== tokenEnd) continue;
      if (shape.notPieces && hasPiece(text, bounds, at, shape.notPieces)) continue;
      hits.push({ kind: shape.kind, end: Math.min(tokenEnd, keyEnd(text, bounds, shape)) - tokenStart });
    }
  }
  return { limit, joined: true, laceEnd: laceEnd - tokenStart, hits, reach: readTo + LOOKAHEAD - tokenStart };
}
