/**
 * More places a secret hides (base32 runs are found with the base64 runs, in encodings.ts): HTML character references (`&#115;`, `&#x73;`,
 * `&hyphen;`), `\u{73}` and octal `\163` escapes, lists of decimal character codes (`115,107,45` or
 * `String.fromCharCode(115, 107, ...)`), and base64 of compressed bytes (gzip, zlib); and two readings of
 * the whole text - reversed and ROT13 - for the top level only. Each run is reported like the runs of
 * encodings.ts: its span and what it decodes to; the scanner masks the whole run when the decoded text holds
 * a secret.
 *
 * Bounds: a run is found by one bounded regular expression (linear) and decoded at most MAX_RUN
 * characters; decompression (encodings.ts `inflate`) stops at 256 KiB, so a zip bomb costs no more. Runs nest no deeper
 * than the scanner's depth limit (secrets.ts).
 */
import { decodeHTML } from 'entities';
import { bytesToText, type Decoded, type EncodedRun } from './encodings.js';
import type { Decoder } from './types.js';

const MAX_RUN = 64 * 1024;
const MIN_DECODED = 20;

// Escapes, each anchored on its first character; the run around them is the escapes and the characters
// keys are made of (`sk&#45;proj&#45;...` is partly encoded).
const HTML_REF = /&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});?/y;
const BRACE_ESCAPE = /\\[ux]\{[0-9A-Fa-f]{1,6}\}/y;
// One to three octal digits (`\163`, `\55`, `\0163` is `\016` then `3`): C, Python, shells and PHP accept all.
const OCTAL_ESCAPE = /\\[0-7]{1,3}/y;
const isRunChar = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x2b ||
  c === 0x2f ||
  c === 0x3d ||
  c === 0x5f ||
  c === 0x2e ||
  c === 0x2d;

/**
 * Runs of escapes (found by indexOf of their first character, then the sticky pattern) mixed with key
 * characters: each run reported once, from its first to its last character. Linear: every search resumes
 * where the last run ended.
 */
function escapeRuns(text: string, first: string, escape: RegExp, onRun: (start: number, end: number) => void): void {
  const n = text.length;
  let from: number;
  for (let at = text.indexOf(first); at >= 0; at = text.indexOf(first, from)) {
    escape.lastIndex = at;
    if (!escape.test(text)) {
      from = at + 1;
      continue;
    }
    let start = at;
    while (start > 0 && isRunChar(text.charCodeAt(start - 1))) start--;
    let end = at;
    for (;;) {
      escape.lastIndex = end;
      // A doubled backslash before an escape (the escape written inside a JSON or C string) is one.
      if (first === '\\' && text.charCodeAt(end) === 0x5c && text.charCodeAt(end + 1) === 0x5c) escape.lastIndex = end + 1;
      if (text.charCodeAt(escape.lastIndex) === first.charCodeAt(0) && escape.test(text)) end = escape.lastIndex;
      else if (end < n && isRunChar(text.charCodeAt(end))) end++;
      else break;
      if (end - start > MAX_RUN) break;
    }
    onRun(start, end);
    from = Math.max(end, at + 1);
  }
}
// At least 20 codes of 1 to 3 digits, each followed by one separator.
const THREE_CODES = /[0-9]{2,3}(?:, ?|; ?| )[0-9]{2,3}(?:, ?|; ?| )[0-9]{2,3}(?:, ?|; ?| )[0-9]{2,3}/;
const CHAR_CODES = /(?<![0-9.])(?:[0-9]{1,3}(?:, ?|; ?| |\)\s*\+\s*(?:chr|String\.fromCharCode)\()){19,65536}[0-9]{1,3}(?![0-9.])/g;

function textOf(bytes: Buffer): Decoded[] {
  if (bytes.length < MIN_DECODED) return [];
  const d = bytesToText(bytes);
  return d ? [d] : [];
}

function each(re: RegExp, text: string, f: (m: RegExpExecArray) => void): void {
  const r = new RegExp(re.source, re.flags);
  for (let m: RegExpExecArray | null; (m = r.exec(text)) !== null;) f(m);
}

/** The runs of the decoders above that are enabled, in no set order. */
export function forEachExtraRun(text: string, decoders: ReadonlySet<Decoder>, onRun: (run: EncodedRun) => void): void {
  if (decoders.has('html-entities') && text.includes('&')) {
    escapeRuns(text, '&', HTML_REF, (start, end) => {
      const run = text.slice(start, end);
      const decoded = decodeHTML(run);
      if (decoded !== run && decoded.length >= MIN_DECODED) onRun({ start, end, via: 'html-entities', decodings: [{ text: decoded, binary: false }] });
    });
  }
  if (decoders.has('unicode-escape') && (text.includes('\\u{') || text.includes('\\x{'))) {
    escapeRuns(text, '\\', BRACE_ESCAPE, (start, end) => {
      const decoded = text.slice(start, end).replace(/\\[ux]\{([0-9A-Fa-f]{1,6})\}/g, (_, h: string) => {
        const cp = parseInt(h, 16);
        return cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
      });
      if (decoded.length >= MIN_DECODED) onRun({ start, end, via: 'unicode-escape', decodings: [{ text: decoded, binary: false }] });
    });
  }
  if (decoders.has('octal-escape') && text.includes('\\')) {
    escapeRuns(text, '\\', OCTAL_ESCAPE, (start, end) => {
      const run = text.slice(start, end);
      const bytes: number[] = [];
      for (let i = 0; i < run.length;) {
        if (run[i] === '\\' && run[i + 1] === '\\') i++;
        if (run[i] === '\\') {
          let j = i + 1;
          let v = 0;
          while (j < i + 4 && j < run.length && run.charCodeAt(j) >= 0x30 && run.charCodeAt(j) <= 0x37 && v * 8 + run.charCodeAt(j) - 0x30 <= 0xff)
            v = v * 8 + run.charCodeAt(j++) - 0x30;
          if (j === i + 1) {
            bytes.push(0x5c);
            i++;
            continue;
          }
          bytes.push(v);
          i = j;
        } else bytes.push(run.charCodeAt(i++));
      }
      const decodings = textOf(Buffer.from(bytes));
      if (decodings.length > 0) onRun({ start, end, via: 'octal-escape', decodings });
    });
  }
  // Three codes in a row are rare in other text: only then is the full pattern tried.
  if (decoders.has('char-codes') && THREE_CODES.test(text)) {
    each(CHAR_CODES, text, (m) => {
      if (m[0].length > MAX_RUN) return;
      const codes = m[0].match(/[0-9]{1,3}/g)!.map(Number);
      // Printable ASCII and line breaks only: a list of other numbers (a table, coordinates) is not text.
      if (!codes.every((c) => (c >= 32 && c < 127) || c === 10 || c === 13)) return;
      const decoded = String.fromCharCode(...codes);
      // The call around the list (`String.fromCharCode(...)`, `chr(`) is masked with it.
      let start = m.index;
      let end = m.index + m[0].length;
      const call = /(?:String\.fromCharCode|chr)\($/.exec(text.slice(Math.max(0, start - 20), start));
      if (call) start -= call[0].length;
      if (call && text.charCodeAt(end) === 0x29) end++;
      onRun({ start, end, via: 'char-codes', decodings: [{ text: decoded, binary: false }] });
    });
  }
}

/**
 * The text with its HTML character references decoded, and where each decoded character came from - for
 * secrets whose references are spread over prose and line breaks (a PEM block whose dashes alone are
 * `&#45;`), which no single run holds. Null when the text holds no reference. `hasRef`: holdsHtmlRef(text),
 * when another engine answered it (the compiled scanner's search).
 */
export function htmlDecodedView(text: string, hasRef = holdsHtmlRef(text)): { text: string; starts: Int32Array; ends: Int32Array } | null {
  if (!hasRef) return null;
  const n = text.length;
  const starts = new Int32Array(n);
  const ends = new Int32Array(n);
  const parts: string[] = [];
  let length = 0;
  let copied = 0; // text[copied, at) is copied unchanged before the next reference
  const copy = (to: number) => {
    for (let i = copied; i < to; i++) {
      starts[length] = i;
      ends[length] = i + 1;
      length++;
    }
    parts.push(text.slice(copied, to));
  };
  for (let at = text.indexOf('&'); at >= 0; at = text.indexOf('&', at + 1)) {
    if (at < copied) continue;
    HTML_REF.lastIndex = at;
    if (!HTML_REF.test(text)) continue;
    const end = HTML_REF.lastIndex;
    const decoded = decodeHTML(text.slice(at, end));
    if (decoded === text.slice(at, end)) continue;
    copy(at);
    for (let k = 0; k < decoded.length; k++) {
      starts[length] = at;
      ends[length] = end;
      length++;
    }
    parts.push(decoded);
    copied = end;
  }
  copy(n);
  return { text: parts.join(''), starts: starts.subarray(0, length), ends: ends.subarray(0, length) };
}
const HAS_REF = /&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/;

/** Does `text` hold an HTML character reference (HAS_REF)? The compiled scanner answers it in its search (scanner/src/refs.rs). */
export function holdsHtmlRef(text: string): boolean {
  return text.includes('&') && HAS_REF.test(text);
}

/** The text reversed, UTF-16 unit by unit (key shapes are ASCII, so no surrogate pair matters). */
export function reversed(text: string): string {
  const n = text.length;
  const units = new Uint16Array(n);
  for (let i = 0; i < n; i++) units[i] = text.charCodeAt(n - 1 - i);
  return fromUnits(units);
}

/** ROT13 of the ASCII letters of the text; other characters as they are. */
export function rot13(text: string): string {
  const n = text.length;
  const units = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const lower = c | 0x20;
    units[i] = lower >= 0x61 && lower <= 0x7a ? (lower <= 0x6d ? c + 13 : c - 13) : c;
  }
  return fromUnits(units);
}

// Both readings are built as code units and turned into one string in chunks (the argument count of a call
// is bounded): a string grown a character at a time, or a replace callback per letter, was a tenth of a large
// prose request's scan. Code units are copied as they are, lone surrogates included.
const CHUNK = 8192;
function fromUnits(units: Uint16Array): string {
  let out = '';
  for (let i = 0; i < units.length; i += CHUNK) out += String.fromCharCode.apply(null, units.subarray(i, i + CHUNK) as unknown as number[]);
  return out;
}

// What a reversed or ROT13 secret must contain, so that only texts holding one are turned at all.
// The prefixes of every listed kind (a few native searches per text: this runs on every text).
const ANCHORS = [
  'sk-',
  'BEGIN',
  ...['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'ASCA'],
  'ghp_',
  'gho_',
  'ghu_',
  'ghs_',
  'ghr_',
  'github_pat_',
  'npm_',
  'glpat-',
  // Slack's with their dash, a JWT's with the usual first header member (`{"alg"`, `{"typ"`): a three-letter
  // anchor (`xox`, `eyJ`) turned round or in ROT13 turns up in any large base64 text, which would then be read
  // twice more for nothing.
  ...['xoxb-', 'xoxp-', 'xoxa-', 'xoxo-', 'xoxs-', 'xoxr-', 'xoxe-'],
  'hf_',
  'SG.',
  'pypi-',
  'eyJhbGci',
  'eyJ0eXAi',
  'AIza',
  '_live_',
  '_test_',
];
export const REVERSED = ANCHORS.map(reversed);
export const ROT13 = ANCHORS.map(rot13);
export const mayHoldReversed = (text: string): boolean => REVERSED.some((a) => text.includes(a));
export const mayHoldRot13 = (text: string): boolean => ROT13.some((a) => text.includes(a));
