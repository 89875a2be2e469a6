/**
 * Secret shapes: where in a (normalised) text live credentials are, by kind. This is what the
 * secret-hygiene rule masks and what `maskOutput` masks in the upstream's answer.
 *
 *  - openai-key: `sk-` then a run of `[A-Za-z0-9_-]` (covers `sk-proj-`, `sk-svcacct-`, `sk-admin-` and
 *    32-hex `sk-` keys of compatible providers). The run must look random, not like an identifier: at least
 *    20 alphanumerics, a digit and a letter, and one dash/underscore-free stretch of 16 or more
 *    (`sk-learn`, `task-runner`, `sk-some-long-css-class` are not keys).
 *  - aws-access-key-id: one of the documented four-letter prefixes (AKIA, ASIA, ABIA, ACCA, AGPA, AIDA,
 *    AIPA, ANPA, ANVA, APKA, AROA, ASCA) then exactly 16 of `[A-Z0-9]`, not inside a longer run of capitals
 *    and digits (an `AKIA...` inside a longer hash is not a key id) but possibly glued to lower-case text
 *    (`keyAKIA...`); or the whole id in lower case (base32 letters, with a digit), standing alone.
 *  - private-key: PEM, OpenSSH and PGP private key blocks, complete or cut off (private-key.ts).
 *  - provider tokens (providers.ts): GitHub and npm (with their CRC32 checksum), GitLab, Slack, Stripe,
 *    Google, Anthropic, Hugging Face, SendGrid, PyPI.
 *  - generic-secret (generic.ts): a high-entropy value assigned to a key-like name (`api_key = ...`).
 *  - credentials.ts: passwords in URLs, connection-string secrets, JWTs, AWS secret access keys, CSV and
 *    INI credential exports.
 *
 * Keys split by the syntax around them (concatenation, template literals, shell line continuations) are read
 * joined (joins.ts).
 *
 * Keys with separators or markup inside them (`AKIA IOSF ODNN ...`, a newline every few characters) are
 * joined back by laced.ts; reversed and ROT13 text is read turned back, at the top level.
 *
 * Encoded secrets (encodings.ts) are found by decoding candidate runs and scanning the decoded text with
 * the same detectors, up to two levels deep (base64 of a percent-encoded key); the hit covers the whole run.
 *
 * Linear time: each regex has one bounded repetition and a lookbehind anchor, and no alternation that can
 * match the same text two ways; a match is never retried from inside itself. Post-filters are single passes.
 */
import { forEachExtraRun, htmlDecodedView, mayHoldReversed, mayHoldRot13, REVERSED, reversed, ROT13, rot13 } from './decoders.js';
import { forEachEncodedRun, mayBeInRun, runKinds, type EncodedRun } from './encodings.js';
import { entropy, findGenericSecrets, keywordStarts } from './generic.js';
import { findCredentials, type CredentialPasses } from './credentials.js';
import { joinedView } from './joins.js';
import { findLaced, type LacedReading, type LacedShape } from './laced.js';
import { normalise } from './normalise.js';
import { findHeaderlessKeys, findPrivateKeyBlocks, HEADERLESS_KEY_LITERALS, mayHoldPrivateKey, PRIVATE_KEY_HEADER_LITERALS } from './private-key.js';
import { base62Crc32Ok, PROVIDER_SHAPES, scanRe } from './providers.js';
import { lastAtOrBefore } from './sorted.js';
import type { Decoder, SecretKind, Via } from './types.js';

export interface SecretHit {
  kind: SecretKind;
  start: number;
  end: number;
  via?: Via;
}

export interface SecretScanOptions {
  kinds: ReadonlySet<SecretKind>;
  decoders: ReadonlySet<Decoder>;
  /** Passes another engine runs instead of this module (the compiled scanner, compiled.ts); the same results. */
  passes?: SecretPasses;
  /**
   * Where findSecrets keeps each text's search (`passes`), by the text's slot (findSecrets' `slot`), so that
   * the boundary pass reads again only the stretches around the cuts between texts instead of searching the
   * joined texts whole (boundaries.ts). By slot, not by text: a map keyed by the text hashed every unit of
   * each text once, about 0.7 ms for the 64 texts of the realistic 524,288-character request.
   */
  searched?: Array<Searched | undefined>;
  /** The search of one text made already, or how to make it (asked instead of `passes` for that text). */
  kept?: Kept;
}

/** A text's search, made (`searched`) or to be made once when first asked (`make`). */
export interface Kept {
  text: string;
  searched?: Searched;
  make?: () => Searched;
  /**
   * The laced-key reading at an offset of `text` that another text's own pass made (its Searched `laced`),
   * when that text holds the same units from there (the boundary pass's joined request: boundaries.ts).
   */
  laced?: (p: number) => LacedReading | undefined;
}

/** What SecretPasses.search finds in a text. */
export interface Searched {
  /** generic.ts keywordStarts. */
  keywordStarts: number[];
  /** laced.ts lacedCandidates. */
  lacedCandidates: ArrayLike<number>;
  /** anchorStarts (absent: the direct shapes search the text with their own expressions). */
  anchors?: ArrayLike<number>;
  /** What `runs` finds, when asked for with the search (absent: asked of `runs` or found by encodings.ts). */
  runs?: ArrayLike<number>;
  /** With `runs`: one number per run, which of a base64 or hex run's readings decode to something (encodings.ts `base64Readings`, `hexReadings`). */
  runMasks?: ArrayLike<number>;
  /** joins.ts joinMatches (absent: joins.ts finds them). */
  joins?: ArrayLike<number> | null;
  /** decoders.ts holdsHtmlRef (absent: decoders.ts answers it). */
  htmlRef?: boolean;
  /** private-key.ts derStarts (absent: private-key.ts searches the text itself). */
  ders?: ArrayLike<number>;
  /**
   * The laced-key readings the text's own pass made, by token start (laced.ts LacedMemo `keep`): kept by
   * findSecrets with the search, for the boundary pass's reading of the joined request (Kept `laced`).
   */
  laced?: Map<number, LacedReading>;
}

/**
 * The secret pass's searches that the compiled scanner runs (compiled.ts), all in one reading of a text, and
 * the credential detectors' readings it runs (credentials.ts CredentialPasses: the AWS secret keys' windows,
 * the INI section line, the hinted lines and their CSV headers).
 */
export interface SecretPasses extends CredentialPasses {
  /** With `runs` (encodings.ts runKinds, not 0): the text's encoded runs too, in the same reading. */
  search(text: string, runs?: number): Searched;
  /** encodings.ts RunFinder: the base64, hex and base32 runs in a text (null: found by encodings.ts). */
  runs?(text: string, base64: boolean, hex: boolean, base32: boolean): ArrayLike<number> | null;
  /**
   * joins.ts joinMatches of a text whose search carries no joins (a stitched search); undefined: found by
   * joins.ts.
   */
  joins?(text: string): ArrayLike<number> | null | undefined;
}

const MAX_DEPTH = 2;

// The run after `sk-` is bounded; a longer run is cut and the rest scanned on its own. The global patterns
// are shared, so each loop over their matches starts by rewinding them (the loops call nothing that uses them).
const OPENAI = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{0,4096}/g;
const OPENAI_SUBPREFIX = /^(?:proj|svcacct|admin)-/;
// A project, service-account or admin key glued to letters or digits in front (`KEYsk-proj-...`, `20sk-proj-...`):
// the sub-prefix is distinctive, and the body must read as random as a laced key's, so `task-proj-...` with
// an identifier after it is not one. (A legacy `sk-` key glued in front is not looked for: `task-`, `disk-`.)
const OPENAI_GLUED = /(?<=[A-Za-z0-9])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{0,4096}/g;
const AWS_PREFIXES = 'AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|APKA|AROA|ASCA';
// Digits glued on either side (`123AKIA...456`) do not hide an id; capitals before the digits (a longer
// run of capitals and digits: a hash) do.
// (The one-character lookbehind first: it fails at once at most places, before the longer one is read.)
const AWS_KEY_ID = new RegExp(`(?<![A-Z])(?<![A-Z][0-9]{0,64})(?:${AWS_PREFIXES})[A-Z0-9]{16}(?![A-Z])(?![0-9]{0,64}[A-Z])`, 'g');
const AWS_KEY_ID_LOWER = new RegExp(
  `(?<![A-Za-z])(?<![A-Za-z][0-9]{0,64})(?:${AWS_PREFIXES.toLowerCase()})[a-z2-7]{16}(?![A-Za-z])(?![0-9]{0,64}[A-Za-z])`,
  'g',
);
const hasDigit = (s: string): boolean => /[0-9]/.test(s);

/**
 * The literals every match of a direct shape's expression starts with (after its lookbehind): a literal, or
 * an alternation of literals then a literal (`(?:sk|rk)_live_`), read from the expression itself, so the
 * anchors cannot drift from it. Throws for an expression of another form, or a literal shorter than two units
 * (the compiled search looks literals up by their first two units).
 */
export function leadingLiterals(re: RegExp): string[] {
  let s = re.source.replace(/^\(\?<[!=]\[[^\]]*\]\)/, '');
  let heads = [''];
  const alt = /^\(\?:([A-Za-z0-9_|-]+)\)/.exec(s);
  if (alt) {
    heads = alt[1]!.split('|');
    s = s.slice(alt[0].length);
  }
  const tail = /^(?:[A-Za-z0-9_-]|\\[./])*/.exec(s)![0].replace(/\\(.)/g, '$1');
  const out = heads.map((h) => h + tail);
  if (out.some((w) => w.length < 2)) throw new Error(`secret shape ${re.source}: no literal of two units or more to anchor on`);
  return out;
}

/**
 * The literal prefixes the direct shapes start with, by group: every match of OPENAI and OPENAI_GLUED
 * starts at an `sk-` (group 0), of AWS_KEY_ID at an upper-case prefix (1), of AWS_KEY_ID_LOWER at a lower-case
 * one (2), of the provider shape PROVIDER_SHAPES[i] at one of its own (3 + i). Most of those expressions begin
 * with a lookbehind, which V8 evaluates at every offset of the text (the glued `sk-` search alone was a tenth
 * of the secret pass on a large request), and each shape was gated by a native search for a literal of it (a
 * dozen searches of each text read); given where the prefixes are (anchorStarts, or the compiled scanner's
 * reading of it), each expression runs only there, sticky, and no text is searched for the literals. The
 * last two groups are what a reversed and a ROT13 secret would hold (decoders.ts `mayHoldReversed`,
 * `mayHoldRot13`: sixteen more native searches of each text), answered by the same reading; so are the
 * last two: whether a text may hold a private key's header (`mayHoldPrivateKey`) or a headerless key body
 * (`findHeaderlessKeys`' gate), three and four more native searches of each text.
 */
export const ANCHOR_GROUPS: readonly (readonly string[])[] = [
  ['sk-'],
  AWS_PREFIXES.split('|'),
  AWS_PREFIXES.toLowerCase().split('|'),
  ...PROVIDER_SHAPES.map((shape) => leadingLiterals(scanRe(shape).re)),
  REVERSED,
  ROT13,
  PRIVATE_KEY_HEADER_LITERALS,
  HEADERLESS_KEY_LITERALS,
];
const SK_ANCHOR = 0;
const AWS_ANCHOR = 1;
const AWS_LOWER_ANCHOR = 2;
const PROVIDER_ANCHOR = 3;
const REVERSED_ANCHOR = PROVIDER_ANCHOR + PROVIDER_SHAPES.length;
const ROT13_ANCHOR = REVERSED_ANCHOR + 1;
const PRIVATE_KEY_ANCHOR = ROT13_ANCHOR + 1;
const HEADERLESS_ANCHOR = PRIVATE_KEY_ANCHOR + 1;
/** An anchor is `offset * 32 + group`. */
export const ANCHOR_GROUP_BITS = 5;
if (ANCHOR_GROUPS.length > 1 << ANCHOR_GROUP_BITS) throw new Error('secret shapes: more anchor groups than an anchor holds');

/**
 * Where the ANCHOR_GROUPS' literals start in `text`: `offset * 32 + group`, once per offset and group where
 * a literal of the group starts, ascending (by offset, then group).
 */
export function anchorStarts(text: string): number[] {
  const found = new Set<number>();
  ANCHOR_GROUPS.forEach((ws, g) => {
    for (const w of ws) for (let p = text.indexOf(w); p >= 0; p = text.indexOf(w, p + 1)) found.add(p * (1 << ANCHOR_GROUP_BITS) + g);
  });
  return [...found].sort((a, b) => a - b);
}

/**
 * Each match of global `re` in `text`, in order, to `fn`: by `re` itself, or - given `anchors` - by `sticky`
 * (the same expression, sticky) at each anchor of `group` past the last match, which finds the same matches
 * because every match of `re` starts at such an anchor and `re` resumes its search at the end of a match.
 * `behind` is what `re`'s lookbehind asks of the unit before a match (NaN at the text's start), checked
 * first: a call of `sticky` costs more than its failure (`sk-` repeated is 174,000 anchors).
 */
function eachMatch(
  text: string,
  re: RegExp,
  sticky: RegExp,
  anchors: ArrayLike<number> | undefined,
  group: number,
  behind: (c: number) => boolean,
  fn: (m: RegExpExecArray) => void,
): void {
  let m: RegExpExecArray | null;
  if (!anchors) {
    re.lastIndex = 0;
    while ((m = re.exec(text)) !== null) fn(m);
    return;
  }
  let from = 0;
  const mask = (1 << ANCHOR_GROUP_BITS) - 1;
  for (let k = 0; k < anchors.length; k++) {
    const a = anchors[k]!;
    if ((a & mask) !== group) continue;
    const p = a >> ANCHOR_GROUP_BITS;
    if (p < from || !behind(text.charCodeAt(p - 1))) continue;
    sticky.lastIndex = p;
    if ((m = sticky.exec(text)) === null) continue;
    from = p + m[0].length;
    fn(m);
  }
}
const stickyOf = (re: RegExp): RegExp => new RegExp(re.source, 'y');
const isUpper = (c: number): boolean => c >= 0x41 && c <= 0x5a;
const isLetter = (c: number): boolean => isUpper(c & ~0x20); // NaN & ~0x20 is 0
const isAlnum = (c: number): boolean => isLetter(c) || (c >= 0x30 && c <= 0x39);
const OPENAI_AT = stickyOf(OPENAI);
const OPENAI_GLUED_AT = stickyOf(OPENAI_GLUED);
const AWS_KEY_ID_AT = stickyOf(AWS_KEY_ID);
const AWS_KEY_ID_LOWER_AT = stickyOf(AWS_KEY_ID_LOWER);
const PROVIDERS_AT = PROVIDER_SHAPES.map((shape) => stickyOf(scanRe(shape).re));
const anyUnit = (): boolean => true;

/** The groups `anchors` hold, one bit each: a shape whose group has no anchor is not read for at all. */
function groupsOf(anchors: ArrayLike<number>): number {
  const mask = (1 << ANCHOR_GROUP_BITS) - 1;
  let groups = 0;
  for (let k = 0; k < anchors.length; k++) groups |= 1 << (anchors[k]! & mask);
  return groups;
}

/**
 * A run of letters and digits that reads as random, not as words run together: it changes between upper
 * case, lower case and digits often (random base62 does so about 6 times in 10, joined English words about
 * once in 10; lower-case hex about 5 in 10).
 */
export function looksRandom(s: string): boolean {
  let changes = 0;
  let prev = -1;
  let digits = 0;
  let letters = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const k = c <= 0x39 ? 0 : c <= 0x5a ? 1 : 2;
    if (k === 0) digits++;
    else letters++;
    if (prev >= 0 && k !== prev) changes++;
    prev = k;
  }
  return digits > 0 && letters > 0 && changes >= 0.3 * (s.length - 1);
}

/**
 * What every match of `re` (matched at a reading's start, its lookbehind dropped) starts with: its leading
 * literals (leadingLiterals), each followed by as many more units as the expression fixes there, a class
 * of single letters (`gh[pousr]_`) counting as each of them.
 */
function keptLeads(re: RegExp): string[] {
  let out = leadingLiterals(re);
  let s = re.source.replace(/^\(\?<[!=]\[[^\]]*\]\)/, '');
  s = s.replace(/^\(\?:[A-Za-z0-9_|-]+\)/, '').replace(/^(?:[A-Za-z0-9_-]|\\[./])*/, '');
  // A class, then literal units, none of them made optional or repeated by a quantifier after it.
  const next = /^\[([A-Za-z0-9]+)\](?![?*+{])((?:(?:[A-Za-z0-9_-]|\\[./])(?![?*+{]))*)/;
  for (let m: RegExpExecArray | null; (m = next.exec(s));) {
    const tail = m[2]!.replace(/\\(.)/g, '$1');
    const letters = [...m[1]!];
    out = out.flatMap((w) => letters.map((c) => w + c + tail));
    s = s.slice(m[0].length);
    if (tail === '' || out.length > 64) break;
  }
  return out;
}

// An AWS id's body is random: one laced from the documented prefixes themselves, forwards or turned round (the
// whole text is also read reversed), is a list of them (`AKIA|ASIA|ABIA|ACCA` in a detection rule, `AKIA, ASIA,
// ABIA, ACCA, AGPA` in documentation). A random body laced in fours has one of these 23 pieces (in its own case)
// as a piece about once in 10,000 ids; laced in other widths, fewer of its pieces are four long.
const AWS_PREFIX_PIECES: ReadonlySet<string> = new Set(
  AWS_PREFIXES.split('|')
    .flatMap((x) => [x, [...x].reverse().join('')])
    .flatMap((x) => [x, x.toLowerCase()]),
);

/** The patterns of laced.ts: each shape without its lookarounds (the token start and end stand for them). */
const bare = (re: RegExp) => new RegExp(re.source.replace(/^\(\?<![^)]*\)/, '').replace(/\(\?![^)]*\)$/, ''), 'y');
const LACED: LacedShape[] = [
  {
    kind: 'openai-key',
    prefixes: ['sk'],
    re: /sk-[A-Za-z0-9_-]{0,4096}/y,
    reading: 'kept',
    fixed: false,
    leads: ['sk-'],
    accept: (m) => {
      // Joined pieces must read as a key, not as words run together (`sk-learn upgrade until ...`). The body
      // without dashes is made only for a reading that passes the first checks: most joined prose has no digit.
      if (m.startsWith('sk-ant-') || !looksLikeOpenAIBody(m, 3, m.length)) return false;
      const body = m.slice(3).replace(/[-_]/g, '');
      return looksRandom(body) && entropy(body) >= 3.5;
    },
  },
  {
    kind: 'openai-key',
    prefixes: ['sk'],
    re: /sk(?:proj|svcacct|admin)?[A-Za-z0-9]{32,4096}/y,
    reading: 'bare',
    fixed: false,
    leads: ['sk-'], // accept
    accept: (m, kept) => kept.startsWith('sk-') && !kept.startsWith('sk-ant-') && looksRandom(m.slice(2)) && entropy(m.slice(2)) >= 3.5,
  },
  {
    kind: 'aws-access-key-id',
    prefixes: AWS_PREFIXES.split('|'),
    re: new RegExp(`(?:${AWS_PREFIXES})[A-Z0-9]{16}`, 'y'),
    reading: 'bare',
    fixed: true,
    notPieces: AWS_PREFIX_PIECES,
  },
  {
    kind: 'aws-access-key-id',
    prefixes: AWS_PREFIXES.toLowerCase().split('|'),
    re: new RegExp(`(?:${AWS_PREFIXES.toLowerCase()})[a-z2-7]{16}`, 'y'),
    reading: 'bare',
    fixed: true,
    accept: hasDigit,
    notPieces: AWS_PREFIX_PIECES,
  },
  // Provider prefixes hold an underscore, which a laced reading without `-`/`_` drops: their own bare forms.
  {
    kind: 'github-token',
    prefixes: ['gh'],
    re: /gh[pousr][A-Za-z0-9]{36}/y,
    reading: 'bare',
    fixed: true,
    leads: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], // accept
    accept: (m, kept) => /^gh[pousr]_/.test(kept) && base62Crc32Ok(m, 3),
  },
  {
    kind: 'npm-token',
    prefixes: ['npm_'],
    re: /npm[A-Za-z0-9]{36}/y,
    reading: 'bare',
    fixed: true,
    leads: ['npm_'], // accept
    accept: (m, kept) => kept.startsWith('npm_') && base62Crc32Ok(m, 3),
  },
  {
    kind: 'stripe-key',
    prefixes: ['sk', 'rk_'],
    re: /[sr]k(?:live|test)[A-Za-z0-9]{20,247}/y,
    reading: 'bare',
    fixed: false,
    leads: ['sk_', 'rk_'], // accept
    accept: (m, kept) => /^[sr]k_/.test(kept) && looksRandom(m.slice(6)),
  },
  // Each provider shape in the kept reading, then (where that and the shapes above find nothing) with only
  // the dashes or only the underscores dropped: a key laced with one of them whose body or prefix holds the
  // other (`AIza7fn-8rW3fAo-SO_7cf3-…`, `glpa_t-79_98Pm_…`).
  ...(['kept', 'no-dash', 'no-underscore'] as const).flatMap((reading) =>
    PROVIDER_SHAPES.filter((p) => p.laced !== undefined).map((p): LacedShape => ({
      kind: p.kind,
      prefixes: p.laced!,
      re: bare(p.re),
      reading,
      fixed: p.re.source.endsWith(')') && p.re.source.includes('(?!'),
      leads: keptLeads(p.re),
      ...(p.accept ? { accept: p.accept } : {}),
    })),
  ),
];

/** Does the run after `sk-` (at text[s, e)) read as a random key rather than an identifier? */
export function looksLikeOpenAIBody(text: string, s: number, e: number): boolean {
  const sub = OPENAI_SUBPREFIX.exec(text.slice(s, Math.min(e, s + 8)));
  if (sub) s += sub[0].length;
  let alnum = 0;
  let digits = 0;
  let letters = 0;
  let stretch = 0;
  let longest = 0;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2d || c === 0x5f) {
      stretch = 0;
      continue;
    }
    alnum++;
    if (c <= 0x39) digits++;
    else letters++;
    if (++stretch > longest) longest = stretch;
  }
  return alnum >= 20 && digits > 0 && letters > 0 && longest >= 16;
}

/** What findDirect hands on from the text's search to the readings after it (encoded runs, joins, HTML references). */
interface Found {
  runs?: ArrayLike<number>;
  runMasks?: ArrayLike<number>;
  joins?: ArrayLike<number> | null;
  htmlRef?: boolean;
}

/**
 * The shapes in `text`. `prose` adds the passes that only text written by people needs (laced keys, values
 * assigned to key-like names): binary decodings - an image, a hash - are read for the plain shapes only.
 * Returns the anchor groups the text holds (groupsOf), or -1 when it was not searched for them.
 */
function findDirect(text: string, opts: SecretScanOptions, hits: SecretHit[], prose = true, runs = 0, found?: Found): number {
  const kinds = opts.kinds;
  // The compiled scanner's one reading of the text (prose only: a binary decoding is short, and searched here),
  // with the encoded runs when the caller reads them next.
  const kept = opts.kept;
  const searched = !prose ? undefined : kept && kept.text === text ? (kept.searched ??= kept.make!()) : opts.passes?.search(text, runs);
  if (found && searched?.runs) {
    found.runs = searched.runs;
    found.runMasks = searched.runMasks;
  }
  if (found && searched && searched.joins !== undefined) found.joins = searched.joins;
  if (found && searched?.htmlRef !== undefined) found.htmlRef = searched.htmlRef;
  const anchors = searched?.anchors;
  const groups = anchors ? groupsOf(anchors) : -1;
  // Given anchors, a shape whose literal is not in the text has no anchor: no native search for it is needed.
  if (kinds.has('openai-key') && (anchors ? groups & (1 << SK_ANCHOR) : text.includes('sk-'))) {
    eachMatch(
      text,
      OPENAI,
      OPENAI_AT,
      anchors,
      SK_ANCHOR,
      (c) => !isAlnum(c),
      (m) => {
        const end = m.index + m[0].length;
        // `sk-ant-` is Anthropic's prefix: its own kind, below.
        if (text.startsWith('ant-', m.index + 3)) return;
        if (looksLikeOpenAIBody(text, m.index + 3, end)) hits.push({ kind: 'openai-key', start: m.index, end });
      },
    );
    eachMatch(text, OPENAI_GLUED, OPENAI_GLUED_AT, anchors, SK_ANCHOR, isAlnum, (m) => {
      const end = m.index + m[0].length;
      const body = m[0].slice(m[0].indexOf('-', 3) + 1).replace(/[-_]/g, '');
      if (looksLikeOpenAIBody(text, m.index + 3, end) && looksRandom(body) && entropy(body) >= 3.5) hits.push({ kind: 'openai-key', start: m.index, end });
    });
  }
  if (kinds.has('aws-access-key-id')) {
    eachMatch(
      text,
      AWS_KEY_ID,
      AWS_KEY_ID_AT,
      anchors,
      AWS_ANCHOR,
      (c) => !isUpper(c),
      (m) => {
        hits.push({ kind: 'aws-access-key-id', start: m.index, end: m.index + m[0].length });
      },
    );
    eachMatch(
      text,
      AWS_KEY_ID_LOWER,
      AWS_KEY_ID_LOWER_AT,
      anchors,
      AWS_LOWER_ANCHOR,
      (c) => !isLetter(c),
      (m) => {
        if (hasDigit(m[0])) hits.push({ kind: 'aws-access-key-id', start: m.index, end: m.index + m[0].length });
      },
    );
  }
  if (kinds.has('private-key')) {
    // Given anchors, whether the header's and the headerless bodies' literals are in the text is known.
    const header = anchors ? (groups & (1 << PRIVATE_KEY_ANCHOR)) !== 0 : undefined;
    const headerless = anchors ? (groups & (1 << HEADERLESS_ANCHOR)) !== 0 : undefined;
    for (const b of findPrivateKeyBlocks(text, header)) hits.push({ kind: 'private-key', start: b.start, end: b.end });
    for (const b of findHeaderlessKeys(text, headerless, searched?.ders)) hits.push({ kind: 'private-key', start: b.start, end: b.end });
  }
  PROVIDER_SHAPES.forEach((shape, i) => {
    if (!kinds.has(shape.kind) || (anchors ? !(groups & (1 << (PROVIDER_ANCHOR + i))) : !text.includes(shape.must))) return;
    const { re } = scanRe(shape);
    eachMatch(text, re, PROVIDERS_AT[i]!, anchors, PROVIDER_ANCHOR + i, anyUnit, (m) => {
      if (shape.accept && !shape.accept(m[0])) return;
      hits.push({ kind: shape.kind, start: m.index, end: m.index + m[0].length });
    });
  });
  if (!prose) return groups;
  const starts = searched ? searched.keywordStarts : keywordStarts(text);
  if (kinds.has('generic-secret')) findGenericSecrets(text, hits, starts);
  findCredentials(text, kinds, hits, starts, opts.passes);
  const laced: SecretHit[] = [];
  // The text's own pass keeps its laced readings; the joined request's reuses them where a text holds the units.
  const own = kept?.text === text ? kept : undefined;
  findLaced(text, LACED, laced, searched?.lacedCandidates, own ? { keep: own.searched?.laced, reuse: own.laced } : undefined);
  for (const h of laced) if (kinds.has(h.kind)) hits.push(h);
  return groups;
}

/** May `text` hold a turned secret (decoders.ts mayHoldReversed / mayHoldRot13), from its anchor `groups` when known? */
const mayHold = (text: string, groups: number, group: number, search: (text: string) => boolean): boolean =>
  groups >= 0 ? (groups & (1 << group)) !== 0 : search(text);

// What a top-level scan reads: the text itself and its whole-text readings (reversed, HTML-decoded, ROT13),
// the encoded runs in it, or both. Inner scans (of a run's decoding) read everything.
const WHOLE = 1;
const RUNS = 2;
const EVERYTHING = WHOLE | RUNS;

function scan(text: string, opts: SecretScanOptions, depth: number, hits: SecretHit[], read = EVERYTHING): void {
  const runs = read & RUNS && depth < MAX_DEPTH ? runKinds(opts.decoders) : 0;
  const found: Found = {};
  const groups = read & WHOLE ? findDirect(text, opts, hits, true, runs, found) : -1;
  if (depth >= MAX_DEPTH || opts.decoders.size === 0) return;
  const onRun = (run: EncodedRun) => {
    for (const d of run.decodings) {
      const inner: SecretHit[] = [];
      if (d.binary) findDirect(d.text, opts, inner, false);
      else scan(normalise(d.text).text, opts, depth + 1, inner);
      if (inner.length > 0) {
        hits.push({ kind: inner[0]!.kind, start: run.start, end: run.end, via: d.via ?? run.via });
        return;
      }
    }
  };
  if (read & RUNS) {
    forEachEncodedRun(text, opts.decoders, onRun, opts.passes, found.runs, found.runMasks);
    forEachExtraRun(text, opts.decoders, onRun);
  }
  if (!(read & WHOLE)) return;
  const n = text.length;
  if (depth > 0) {
    // A decoded text read backwards: base64 or hex of a reversed key (one level, no further decoding).
    if (opts.decoders.has('reversed') && mayHold(text, groups, REVERSED_ANCHOR, mayHoldReversed)) {
      const inner: SecretHit[] = [];
      findDirect(reversed(text), opts, inner);
      for (const h of inner) hits.push({ kind: h.kind, start: n - h.end, end: n - h.start, via: 'reversed' });
    }
    return;
  }
  // The whole text read backwards and in ROT13 - only when it holds what a turned secret would.
  if (opts.decoders.has('reversed') && mayHold(text, groups, REVERSED_ANCHOR, mayHoldReversed)) {
    const inner: SecretHit[] = [];
    scan(reversed(text), { ...opts, decoders: NO_DECODERS }, MAX_DEPTH, inner);
    for (const h of inner) hits.push({ kind: h.kind, start: n - h.end, end: n - h.start, via: 'reversed' });
  }
  if (opts.decoders.has('html-entities')) {
    // References spread over the text (not one run): read the whole text decoded, hits mapped back.
    const view = htmlDecodedView(text, found.htmlRef);
    if (view) {
      const inner: SecretHit[] = [];
      findDirect(view.text, opts, inner);
      for (const h of inner) hits.push({ kind: h.kind, start: view.starts[h.start]!, end: view.ends[h.end - 1]!, via: 'html-entities' });
    }
  }
  {
    // Keys split by string concatenation, template-literal interpolation or a shell line continuation.
    // A stitched search (the boundary pass's joined request) carries no joins: the other engine reads them.
    const view = joinedView(text, found.joins !== undefined ? found.joins : opts.passes?.joins?.(text));
    if (view) {
      const inner: SecretHit[] = [];
      findDirect(view.text, opts, inner);
      for (const h of inner) hits.push({ kind: h.kind, start: view.startOf(h.start), end: view.endOf(h.end - 1) });
    }
  }
  if (opts.decoders.has('rot13') && mayHold(text, groups, ROT13_ANCHOR, mayHoldRot13)) {
    const inner: SecretHit[] = [];
    scan(rot13(text), { ...opts, decoders: NO_DECODERS }, MAX_DEPTH, inner);
    for (const h of inner) hits.push({ kind: h.kind, start: h.start, end: h.end, via: 'rot13' });
  }
}

const NO_DECODERS: ReadonlySet<Decoder> = new Set();

/**
 * Every secret in `text` (already normalised), as spans of `text`, possibly overlapping, in no set order.
 * With `opts.searched` and the text's `slot`, the text's search is kept there (for the boundary pass).
 */
export function findSecrets(text: string, opts: SecretScanOptions, slot?: number): SecretHit[] {
  const hits: SecretHit[] = [];
  if (opts.searched && opts.passes && slot !== undefined) {
    const searched = opts.passes.search(text, runKinds(opts.decoders));
    searched.laced = new Map();
    opts.searched[slot] = searched;
    // The text's own reading answers from the kept search (its decodings are searched as before).
    scan(text, { ...opts, kept: { text, searched } }, 0, hits);
    return hits;
  }
  scan(text, opts, 0, hits);
  return hits;
}

// Joins the stretches findSecretsAcross reads: no hit contains it, so none runs from one stretch into the next.
const STRETCH_SEPARATOR = '\u0000';

/**
 * The hits of findSecrets(text, opts) that contain the characters on both sides of one of the `cuts`
 * (offsets in `text`, ascending), and maybe some others; in no set order (the boundary pass reports each
 * as `split`, and findings and masks do not depend on the order).
 *
 * A private key block may hold any character, but every other hit is made of characters an encoded run may
 * hold (key shapes are base64-alphabet characters; an encoded run is reported whole), and no shape or run
 * reaches past a character it cannot hold - so it is found alike in its stretch of such characters and in
 * the whole text. So only the stretches around the cuts are read (a few words of prose, usually, instead
 * of the whole window), joined by a character no hit holds, in one scan; unless the text may hold a private
 * key block: then all but the encoded runs are read in the whole text (as before), and the runs - most of
 * the work of a whole read - still only in the stretches.
 */
export function findSecretsAcross(text: string, cuts: readonly number[], opts: SecretScanOptions): SecretHit[] {
  // A private key block may hold any character, and so may the hits around one that a whole read of the text
  // finds (an assignment's name and quotes before its value): all but the encoded runs are read in the whole
  // text, the runs in their stretches. (This was a whole findSecrets of the text, a fifth of a large request's
  // scan as soon as its prose held the word "begin": decoding every run was most of it.)
  if (opts.kinds.has('private-key') && mayHoldKeyHeader(text, opts)) {
    const hits: SecretHit[] = [];
    scan(text, opts, 0, hits, WHOLE);
    hits.push(...findSecretsInStretches(text, cuts, opts, RUNS));
    return hits;
  }
  return findSecretsInStretches(text, cuts, opts, EVERYTHING);
}

/**
 * mayHoldPrivateKey(text), from the text's kept search when the boundary pass keeps one for it (the stitched
 * search's anchors: every place a header literal starts, so its group is there exactly when one is in the
 * text; the whole read below makes that search anyway): three native searches of a joined request fewer.
 */
function mayHoldKeyHeader(text: string, opts: SecretScanOptions): boolean {
  const kept = opts.kept;
  const anchors = kept && kept.text === text ? (kept.searched ??= kept.make!()).anchors : undefined;
  return anchors ? (groupsOf(anchors) & (1 << PRIVATE_KEY_ANCHOR)) !== 0 : mayHoldPrivateKey(text);
}

/** What findSecrets(text, opts) finds by `read` in the stretches of run characters around the cuts. */
function findSecretsInStretches(text: string, cuts: readonly number[], opts: SecretScanOptions, read: number): SecretHit[] {
  const find = (t: string): SecretHit[] => {
    const hits: SecretHit[] = [];
    scan(t, opts, 0, hits, read);
    return hits;
  };
  const n = text.length;
  const starts: number[] = []; // where each stretch starts in `text`
  const at: number[] = []; // and in `joined`
  let joined = '';
  for (let c = 0; c < cuts.length; c++) {
    const cut = cuts[c]!;
    // A character no hit holds on either side of a cut means no hit crosses it.
    if (cut >= n || !mayBeInRun(text.charCodeAt(cut - 1)) || !mayBeInRun(text.charCodeAt(cut))) continue;
    // A split is of two texts: a stretch reaches back no further than the cut before and on no further than
    // the cut after, so the text before does not glue to a key's first part (`go` + `AIza…` read as
    // `goAIza…`, which no key starts) and the text after is not read as more of it. Neighbouring stretches
    // share the text between their cuts.
    const from = c > 0 ? cuts[c - 1]! : 0;
    const to = c + 1 < cuts.length ? cuts[c + 1]! : n;
    let start = cut - 1;
    while (start > from && mayBeInRun(text.charCodeAt(start - 1))) start--;
    let end = cut + 1;
    while (end < to && mayBeInRun(text.charCodeAt(end))) end++;
    if (start === 0 && end === n) return find(text);
    if (joined !== '') joined += STRETCH_SEPARATOR;
    starts.push(start);
    at.push(joined.length);
    joined += text.slice(start, end);
  }
  if (joined === '') return [];
  return find(joined).map((hit) => {
    const k = Math.max(0, lastAtOrBefore(at, hit.start));
    const shift = starts[k]! - at[k]!;
    return { ...hit, start: hit.start + shift, end: hit.end + shift };
  });
}
