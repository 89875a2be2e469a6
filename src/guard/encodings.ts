/**
 * Encoded runs: the places in a text where a secret may hide behind base64, hex or percent/backslash
 * escapes, each with the text it decodes to. The secret scanner (secrets.ts) scans the decoded text and, on
 * a hit, masks the whole encoded run in the original.
 *
 * Runs are found in single passes over the text (a class-table lookup per character, or only a few in
 * every 24 where the text is prose; escapes by indexOf of `%` and backslash), and decoding is linear in the
 * run. Runs are found as:
 *  - base64 / base64url: runs of at least 24 alphabet characters (a 20-byte AWS key id needs 27), optional
 *    `=` padding, and MIME-style line breaks after lines of at least 32 characters. Only runs that mix
 *    upper and lower case and are not all hex digits (base64 of text always does; hashes, identifiers and
 *    hex do not). Decoded at all four alignments: a run glued to a preceding character starts mid-quantum.
 *  - hex: runs of at least 40 hex digits (20 bytes), at both alignments; and byte lists of at least 20 pairs
 *    separated by one of ` `, `:`, `,`, `, ` with optional `0x` (hexdump and C-array forms).
 *  - escapes: runs of URL/identifier characters (letters, digits, `+/-_=.~:,!*`) holding `%XX` (percent), `\xXX` (hex) or `\uXXXX`
 *    (unicode-escape) escapes, mixed with literal characters (`sk%2Dproj...` is a partially encoded key).
 *
 * Decoded bytes become text as UTF-8 when they are valid UTF-8, otherwise as Latin-1 marked `binary`
 * (an image, a hash): key shapes are ASCII, so they survive either way, and binary is not decoded further.
 */
import { gunzipSync, inflateSync } from 'node:zlib';
import type { Decoder, Via } from './types.js';

export interface Decoded {
  text: string;
  binary: boolean;
  /** Set when this decoding went one step further than the run's own encoding (base64 of gzip data). */
  via?: Via;
}

export interface EncodedRun {
  start: number;
  end: number;
  via: Via;
  decodings: Decoded[];
}

const MIN_BASE64 = 24;
const MIN_HEX_DIGITS = 40;
const MIN_HEX_PAIRS = 20;
const MIN_DECODED = 20; // the shortest secret shape (an AWS access key id) is 20 characters
const MIME_LINE_MIN = 32;
const MIN_LIST_LENGTH = MIN_HEX_PAIRS * 3 - 1; // pairs and one-character separators
const MAX_SKIP_BACKOFF = 1024;
const MAX_BASE32 = 16 * 1024;

const B64 = 1; // base64 or base64url alphabet
const HEX = 2;
const ESC = 4; // may appear in an escape run
const ALNUM = 8;
const UPPER = 16;
const LOWER = 32;
const NOT_HEX = 64; // in the base64 alphabet but not a hex digit
const IN_RUN = 128; // may be inside some run: an alphabet character, padding, a separator, a line break
const IN_LIST = 256; // may be inside a hex byte list: a hex digit, the x of 0x, a separator
const NOT_B32_UPPER = 512; // in a base64 run but not in the upper-case base32 alphabet [A-Z2-7]
const NOT_B32_LOWER = 1024; // ... nor in the lower-case one [a-z2-7]
const CLASS = new Uint16Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  if (/[A-Za-z0-9]/.test(ch)) CLASS[c]! |= B64 | ESC | ALNUM;
  if (/[0-9A-Fa-f]/.test(ch)) CLASS[c]! |= HEX;
  else if (/[A-Za-z+/_-]/.test(ch)) CLASS[c]! |= NOT_HEX;
  if (/[A-Z]/.test(ch)) CLASS[c]! |= UPPER;
  if (/[a-z]/.test(ch)) CLASS[c]! |= LOWER;
  if ('+/-_'.includes(ch)) CLASS[c]! |= B64 | ESC;
  if ('=.~:,!*%\\'.includes(ch)) CLASS[c]! |= ESC;
  if ((CLASS[c]! & (B64 | ESC)) !== 0 || ' \r\n'.includes(ch)) CLASS[c]! |= IN_RUN;
  if (/[0-9A-Fa-fxX ,:]/.test(ch)) CLASS[c]! |= IN_LIST;
  if (!/[A-Z2-7]/.test(ch)) CLASS[c]! |= NOT_B32_UPPER;
  if (!/[a-z2-7]/.test(ch)) CLASS[c]! |= NOT_B32_LOWER;
}
const is = (code: number, flag: number): boolean => code < 128 && (CLASS[code]! & flag) !== 0;

/** Can character `code` be inside an encoded run of any kind? */
export const mayBeInRun = (code: number): boolean => is(code, IN_RUN);

const utf8 = new TextDecoder('utf-8');

/**
 * Is `buf` well-formed UTF-8? A plain loop rather than a fatal TextDecoder: random bytes (images, hashes)
 * fail within a few bytes, and a thrown decoding error costs far more than the whole check.
 */
function isUtf8(buf: Uint8Array): boolean {
  const n = buf.length;
  for (let i = 0; i < n;) {
    const b = buf[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min: number;
    if (b >= 0xc2 && b <= 0xdf) {
      need = 1;
      min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      min = 0x10000;
    } else return false;
    if (i + need >= n) return false;
    let cp = b & (0x3f >> need);
    for (let k = 1; k <= need; k++) {
      const c = buf[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += need + 1;
  }
  return true;
}

const isPrintable = (b: number): boolean => (b >= 0x20 && b < 0x7f) || b === 0x09 || b === 0x0a || b === 0x0d;

/**
 * Is there a run of at least MIN_DECODED printable ASCII bytes (tab and line breaks included)? Such a run
 * covers one in every MIN_DECODED bytes, so only those are tested, and their neighbours only when they are
 * printable: random bytes, the usual input here, are read a few bytes in twenty.
 */
function hasPrintableRun(buf: Uint8Array): boolean {
  for (let at = MIN_DECODED - 1; at < buf.length; at += MIN_DECODED) {
    if (!isPrintable(buf[at]!)) continue;
    let start = at;
    while (start > at - MIN_DECODED + 1 && isPrintable(buf[start - 1]!)) start--;
    let end = at + 1;
    while (end - start < MIN_DECODED && end < buf.length && isPrintable(buf[end]!)) end++;
    if (end - start >= MIN_DECODED) return true;
  }
  return false;
}

/**
 * Bytes as text: ASCII and valid UTF-8 as such, anything else as Latin-1 marked binary - or null when the
 * bytes are binary without a printable stretch long enough to hold a secret (a hash, an image), which is
 * nearly always, so nothing is converted or scanned.
 */
export function bytesToText(buf: Uint8Array): Decoded | null {
  let ascii = true;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return { text: latin1(buf), binary: false };
  if (isUtf8(buf)) return { text: utf8.decode(buf), binary: false };
  return hasPrintableRun(buf) ? { text: latin1(buf), binary: true } : null;
}

const latin1 = (buf: Uint8Array): string => Buffer.from(buf.buffer, buf.byteOffset, buf.length).toString('latin1');

function pushDecoded(out: Decoded[], buf: Uint8Array): void {
  if (buf.length < MIN_DECODED) return;
  const d = bytesToText(buf);
  if (d) out.push(d);
}

const MAX_INFLATED = 256 * 1024;

/** Gzip or zlib data decompressed, at most MAX_INFLATED bytes (a zip bomb costs no more), or null. */
export function inflate(bytes: Uint8Array): Buffer | null {
  // Most runs whose first bytes read as a zlib header are not compressed (one in 31 pairs passes the check):
  // the error zlib throws then is dropped, so it is made without a stack, which cost more than the inflating
  // (and several times more where stacks are mapped through source maps).
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    if (bytes[0] === 0x1f && bytes[1] === 0x8b) return gunzipSync(bytes, { maxOutputLength: MAX_INFLATED });
    if (bytes.length > 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0) {
      return inflateSync(bytes, { maxOutputLength: MAX_INFLATED });
    }
  } catch {
    // Not compressed after all, truncated, or past the bound: nothing to read.
  } finally {
    Error.stackTraceLimit = limit;
  }
  return null;
}

/**
 * What decodeBase64Run would decode, when another engine has said it (the compiled scanner, decodable.rs):
 * bit k, the run read from its k-th unit decodes to bytes pushDecoded keeps; MAY_INFLATE, the reading from
 * its first unit starts as gzip or zlib data. A reading neither keeps nor inflates is not decoded here.
 */
const MAY_INFLATE = 16;

/** The readings of the hex run `digits` that decodeHexForwards keeps: bit k, read from the k-th digit (the reference for decodable.rs). */
export function hexReadings(digits: string): number {
  let mask = 0;
  for (let offset = 0; offset < 2; offset++) {
    const s = digits.slice(offset);
    const bytes = Buffer.from(s.length % 2 === 0 ? s : s.slice(0, -1), 'hex');
    if (bytes.length >= MIN_DECODED && bytesToText(bytes)) mask |= 1 << offset;
  }
  return mask;
}

/** The readings of the base64 run text[start, end) that decodeBase64Run keeps, as the bits above (the reference for decodable.rs). */
export function base64Readings(text: string, start: number, end: number): number {
  let mask = 0;
  for (let offset = 0; offset < 4; offset++) {
    const bytes = Buffer.from(text.slice(start + offset, end), 'base64');
    if (bytes.length >= MIN_DECODED && bytesToText(bytes)) mask |= 1 << offset;
    if (
      offset === 0 &&
      ((bytes[0] === 0x1f && bytes[1] === 0x8b) || (bytes.length > 2 && (bytes[0]! & 0x0f) === 8 && ((bytes[0]! << 8) | bytes[1]!) % 31 === 0))
    )
      mask |= MAY_INFLATE;
  }
  return mask;
}

function decodeBase64Run(text: string, start: number, end: number, compressed: boolean, mask = 0x1f): Decoded[] {
  const out: Decoded[] = [];
  // Buffer's base64 decoder accepts both alphabets and skips line breaks and padding.
  for (let offset = 0; offset < 4; offset++) {
    const inflates = compressed && offset === 0 && (mask & MAY_INFLATE) !== 0;
    if ((mask & (1 << offset)) === 0 && !inflates) continue;
    const bytes = Buffer.from(text.slice(start + offset, end), 'base64');
    // Compressed data is read through: a key gzipped then base64-encoded is still a key.
    const inflated = inflates ? inflate(bytes) : null;
    if (inflated) {
      const before = out.length;
      pushDecoded(out, inflated);
      for (let k = before; k < out.length; k++) out[k]!.via = 'compressed';
    }
    pushDecoded(out, bytes);
  }
  // Base64 written backwards (`==gc...`): when the run reads as nothing forwards and its last characters,
  // turned round, decode to text, the whole run is read turned round (one more level, marked reversed).
  if (!out.some((d) => !d.binary)) {
    const tail = text.slice(Math.max(start, end - 8), end);
    const probe = Buffer.from(reverseUnits(tail), 'base64');
    if (probe.length >= 6 && probe.every(isPrintable)) {
      const before = out.length;
      pushDecoded(out, Buffer.from(reverseUnits(text.slice(start, end)), 'base64'));
      for (let k = before; k < out.length; k++) out[k]!.via = 'reversed';
    }
  }
  return out;
}

const reverseUnits = (s: string): string => {
  let out = '';
  for (let i = s.length - 1; i >= 0; i--) out += s[i];
  return out;
};

// Distinct letters in the first 64 characters of a base32 run without a digit: the base32 of an AWS key id
// that has no digit holds 10 or more (20,000 random ids); a run of one letter, or a few, is not base32.
const BASE32_LETTERS = 8;
function base32Like(head: string): boolean {
  if (/[2-7]/.test(head)) return true;
  return new Set(head.toUpperCase().replace(/[^A-Z]/g, '')).size >= BASE32_LETTERS;
}

/** RFC 4648 base32, either case, padding ignored. */
export function decodeBase32(s: string): Buffer {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i) | 0x20; // lower case
    const v = c >= 0x61 && c <= 0x7a ? c - 0x61 : c >= 0x32 && c <= 0x37 ? c - 0x32 + 26 : -1;
    if (v < 0) continue;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** `mask`: which of decodeHexForwards' two readings to decode (hexReadings, from another engine); all without it. */
function decodeHex(digits: string, mask = 3): Decoded[] {
  const out = decodeHexForwards(digits, mask);
  // Hex written backwards: read turned round when its last digits, turned round, are printable bytes (its
  // forwards reading may be text too: a byte with its digits swapped is often printable).
  const tail = Buffer.from(reverseUnits(digits.slice(-8)), 'hex');
  if (tail.length === 4 && tail.every(isPrintable)) {
    for (const d of decodeHexForwards(reverseUnits(digits))) out.push({ ...d, via: 'reversed' });
  }
  return out;
}

function decodeHexForwards(digits: string, mask = 3): Decoded[] {
  const out: Decoded[] = [];
  for (let offset = 0; offset < 2; offset++) {
    if ((mask & (1 << offset)) === 0) continue;
    const s = digits.slice(offset);
    pushDecoded(out, Buffer.from(s.length % 2 === 0 ? s : s.slice(0, -1), 'hex'));
  }
  return out;
}

/**
 * `73 6b 2d`, `73:6b:2d`, `0x73, 0x6b`: byte pairs with separators, each pair standing alone. Walks the list
 * starting at `start`; returns its end and hex digits, or null when it has fewer than 20 pairs.
 */
function hexPairsAt(text: string, start: number): { end: number; digits: string } | null {
  const n = text.length;
  let digits = '';
  let pairs = 0;
  let last = start;
  let p = start;
  for (;;) {
    if (p + 1 < n && text.charCodeAt(p) === 0x30 && (text.charCodeAt(p + 1) | 0x20) === 0x78) p += 2;
    if (p + 1 >= n || !is(text.charCodeAt(p), HEX) || !is(text.charCodeAt(p + 1), HEX)) break;
    if (p + 2 < n && is(text.charCodeAt(p + 2), ALNUM)) break;
    digits += text.slice(p, p + 2);
    pairs++;
    last = p + 2;
    const sep = last < n ? text.charCodeAt(last) : 0;
    if (sep !== 0x20 && sep !== 0x2c && sep !== 0x3a) break;
    p = last + 1;
    if (sep === 0x2c && p < n && text.charCodeAt(p) === 0x20) p++;
  }
  return pairs >= MIN_HEX_PAIRS ? { end: last, digits } : null;
}

/**
 * Can the run text[start, end) of base64-alphabet characters start a hex byte list (`de ad`, `0xde, 0xad`)?
 * Only a pair standing alone, or after `0x`, and followed by a separator can (see hexPairsAt).
 */
function mayStartHexList(text: string, start: number, end: number): boolean {
  const sep = end < text.length ? text.charCodeAt(end) : 0;
  if (sep !== 0x20 && sep !== 0x2c && sep !== 0x3a) return false;
  const prefixed = end - start === 4 && text.charCodeAt(start) === 0x30 && (text.charCodeAt(start + 1) | 0x20) === 0x78;
  if (end - start !== 2 && !prefixed) return false;
  return is(text.charCodeAt(end - 2), HEX) && is(text.charCodeAt(end - 1), HEX);
}

/**
 * How far the scan at `i` can skip: no run that scanRun could report (base64, hex, a byte list) starts
 * between `i` and the offset returned. Such a run starting in the next MIN_BASE64 characters would cover
 * the last of them - base64 and hex need MIN_BASE64 alphabet characters in a row, a byte list
 * MIN_LIST_LENGTH characters of its own - so that one character and the stretch around it decide. In prose,
 * a few characters are read for every MIN_BASE64, and what is skipped is words. At most MIN_BASE64 +
 * MIN_LIST_LENGTH characters are read per call.
 */
function skipQuiet(text: string, i: number, hex: boolean): number {
  const last = i + MIN_BASE64 - 1;
  if (last >= text.length) return i;
  const c = text.charCodeAt(last);
  if (hex && is(c, IN_LIST)) {
    const start = stretchStart(text, i, last, IN_LIST);
    if (stretchEnd(text, start, last, IN_LIST, MIN_LIST_LENGTH) - start >= MIN_LIST_LENGTH) return i;
  }
  if (!is(c, B64)) return last + 1;
  // The run holding `last`, as the scan from `i` would cut it: passed over if short, else where to stop.
  const start = stretchStart(text, i, last, B64);
  const end = stretchEnd(text, start, last, B64, MIN_BASE64);
  return end - start < MIN_BASE64 ? end : start;
}

/** Where the stretch of `flag` characters holding `at` starts, counting from `from` at the earliest. */
function stretchStart(text: string, from: number, at: number, flag: number): number {
  let start = at;
  while (start > from && is(text.charCodeAt(start - 1), flag)) start--;
  return start;
}

/** Where the stretch of `flag` characters from `start` over `at` ends - walked no further than `enough` characters. */
function stretchEnd(text: string, start: number, at: number, flag: number, enough: number): number {
  let end = at + 1;
  while (end - start < enough && end < text.length && is(text.charCodeAt(end), flag)) end++;
  return end;
}

/**
 * Base64 runs, hex runs and hex byte lists in one pass over the text. Stretches where none can start are
 * skipped (skipQuiet); elsewhere each run of base64-alphabet characters is measured (a table lookup per
 * character), and one that is too short for base64 or hex and starts no byte list - a word - is passed
 * over; the others are walked by scanRun. Where skips keep failing (base64, hex, long stretches of list
 * characters) they are tried ever less often, so that text is read little more than once.
 */
export function scanRuns(text: string, base64: boolean, hex: boolean, base32: boolean, found: Found): void {
  const n = text.length;
  let i = 0;
  let nextSkip = 0;
  let backoff = MIN_BASE64;
  while (i < n) {
    if (i >= nextSkip) {
      const past = skipQuiet(text, i, hex);
      if (past > i) {
        i = past;
        backoff = MIN_BASE64;
        continue;
      }
      nextSkip = i + backoff;
      backoff = Math.min(2 * backoff, MAX_SKIP_BACKOFF);
    }
    if (!is(text.charCodeAt(i), B64)) {
      i++;
      continue;
    }
    // Measured only as far as it matters: a run that long is walked again by scanRun.
    let end = i + 1;
    while (end < n && end - i < MIN_BASE64 && is(text.charCodeAt(end), B64)) end++;
    if (end - i < MIN_BASE64 && !(hex && mayStartHexList(text, i, end))) i = end;
    else i = scanRun(text, i, base64, hex, base32, found);
  }
}

/**
 * The run of base64-alphabet characters at `start`, with the padding and MIME line breaks base64 may carry:
 * reports the base64 run, the hex runs inside it or the hex byte list it starts, and returns where it ends.
 */
function scanRun(text: string, start: number, base64: boolean, hex: boolean, base32: boolean, found: Found): number {
  const n = text.length;
  let i = start;
  let flags = 0;
  let count = 0;
  for (;;) {
    // One line of the run; hex runs inside it end at any character that is not a hex digit.
    const lineStart = i;
    let hexStart = i;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      const k = c < 128 ? CLASS[c]! : 0;
      if ((k & B64) === 0) break;
      flags |= k;
      if ((k & HEX) === 0) {
        if (hex && i - hexStart >= MIN_HEX_DIGITS) found(HEX_RUN, hexStart, i);
        hexStart = i + 1;
      }
    }
    if (hex && i - hexStart >= MIN_HEX_DIGITS) found(HEX_RUN, hexStart, i);
    const line = i - lineStart;
    count += line;
    if (hex && (line === 2 || line === 4) && i < n) {
      const list = hexPairsAt(text, lineStart);
      if (list) {
        found(HEX_LIST, lineStart, list.end);
        i = list.end;
        count = 0; // a byte list is not base64
        break;
      }
    }
    let pad = 0;
    while (i < n && pad < 2 && text.charCodeAt(i) === 0x3d /* = */) {
      i++;
      pad++;
    }
    if (pad > 0 || line < MIME_LINE_MIN || i >= n) break;
    // MIME wraps base64 at 64 or 76 columns: a full-length line continues on the next one.
    let k = i;
    if (text.charCodeAt(k) === 0x0d) k++;
    if (text.charCodeAt(k) !== 0x0a || !is(text.charCodeAt(k + 1), B64)) break;
    i = k + 1;
  }
  // Base32 (RFC 4648) of at least 20 bytes: one case of letters and the digits 2-7 only.
  // Base32 of text mixes letters with the digits 2-7, or (a short text of capitals: an AWS key id) reads as
  // many different letters (a run of one letter, or a long word, does neither), and a key in base32 is a few
  // kilobytes at most.
  if (
    base32 &&
    count >= 32 &&
    count <= MAX_BASE32 &&
    i - start - count <= 6 &&
    ((flags & NOT_B32_UPPER) === 0 || (flags & NOT_B32_LOWER) === 0) &&
    base32Like(text.slice(start, Math.min(i, start + 64)))
  )
    found(BASE32_RUN, start, i);
  // Base64 of text always mixes cases and uses letters beyond a-f; hashes and identifiers rarely do.
  if (base64 && count >= MIN_BASE64 && (flags & UPPER) !== 0 && (flags & LOWER) !== 0 && (flags & NOT_HEX) !== 0) found(BASE64_RUN, start, i);
  return i === start ? i + 1 : i;
}

/**
 * What scanRuns finds, in order: a hex run text[start, end), a hex byte list, a base32 run (without the
 * padding past two `=`), a base64 run. The finding is all per-character work; `decodeFound` decodes one.
 */
export type Found = (kind: number, start: number, end: number) => void;
export const HEX_RUN = 0;
export const HEX_LIST = 1;
export const BASE32_RUN = 2;
export const BASE64_RUN = 3;

/** Decodes what scanRuns found at text[start, end) and reports it to `onRun` when it decodes to something. */
function decodeFound(text: string, kind: number, start: number, end: number, compressed: boolean, onRun: (run: EncodedRun) => void, mask?: number): void {
  if (kind === HEX_RUN || kind === HEX_LIST) {
    const decodings = kind === HEX_RUN ? decodeHex(text.slice(start, end), mask) : decodeHex(hexPairsAt(text, start)!.digits);
    if (decodings.length > 0) onRun({ start, end, via: 'hex', decodings });
  } else if (kind === BASE32_RUN) {
    const decoded = decodeBase32(text.slice(start, end));
    if (decoded.length >= MIN_DECODED) {
      const d = bytesToText(decoded);
      // Base32 pads with up to six `=`; the run above took at most two.
      const i = end;
      while (end < text.length && end - i < 4 && text.charCodeAt(end) === 0x3d) end++;
      if (d) onRun({ start, end, via: 'base32', decodings: [d] });
    }
  } else {
    const decodings = decodeBase64Run(text, start, end, compressed, mask);
    if (decodings.length > 0) onRun({ start, end, via: 'base64', decodings });
  }
}

/** The scanRuns kinds `decoders` ask for, as RunFinder takes them: 1 base64, 2 hex, 4 base32. */
export const runKinds = (decoders: ReadonlySet<Decoder>): number =>
  (decoders.has('base64') ? 1 : 0) | (decoders.has('hex') ? 2 : 0) | (decoders.has('base32') ? 4 : 0);

/**
 * The runs scanRuns finds in `text` (as another engine gives them: kind, start, end, flat), or null when no
 * other engine finds them.
 */
export interface RunFinder {
  runs?(text: string, base64: boolean, hex: boolean, base32: boolean): ArrayLike<number> | null;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

function hexAt(text: string, p: number, digits: number): number {
  if (p + digits > text.length) return -1;
  let v = 0;
  for (let k = 0; k < digits; k++) {
    const h = hexValue(text.charCodeAt(p + k));
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

function pushUtf8(bytes: number[], cp: number): void {
  if (cp < 0x80) bytes.push(cp);
  else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

interface EscapeKinds {
  percent: boolean;
  hex: boolean;
  unicode: boolean;
}

/** Length of the escape of an enabled kind at `p` (`%XX` 3, `\xXX` 4, `\uXXXX` 6), or 0. */
function escapeLength(text: string, p: number, kinds: EscapeKinds): number {
  if (text.charCodeAt(p) === 0x25) {
    // `%u0073` (the old JavaScript escape() form) is a unicode escape.
    if ((text.charCodeAt(p + 1) | 0x20) === 0x75) return kinds.unicode && hexAt(text, p + 2, 4) >= 0 ? 6 : 0;
    return kinds.percent && hexAt(text, p + 1, 2) >= 0 ? 3 : 0;
  }
  const next = text.charCodeAt(p + 1);
  if (next === 0x78 || next === 0x58) return kinds.hex && hexAt(text, p + 2, 2) >= 0 ? 4 : 0;
  if (next === 0x75) return kinds.unicode && hexAt(text, p + 2, 4) >= 0 ? 6 : 0;
  if (next === 0x55) return kinds.unicode && hexAt(text, p + 2, 8) >= 0 ? 10 : 0;
  return 0;
}

/**
 * Escape runs. Escapes start with `%` or a backslash, found with indexOf - native, and far cheaper than
 * reading every character, as most texts hold few or none; each search resumes where the last one
 * stopped, so the text is searched once. Only the kinds of escape being decoded are looked for: no escape
 * holds the first character of another, so passing over one never hides another.
 */
function scanEscapes(text: string, kinds: EscapeKinds, onRun: (run: EncodedRun) => void): void {
  const n = text.length;
  let percentAt = kinds.percent || kinds.unicode ? text.indexOf('%') : -1;
  let backslashAt = kinds.hex || kinds.unicode ? text.indexOf('\\') : -1;
  let from = 0;
  for (;;) {
    if (percentAt >= 0 && percentAt < from) percentAt = text.indexOf('%', from);
    if (backslashAt >= 0 && backslashAt < from) backslashAt = text.indexOf('\\', from);
    const at = percentAt < 0 ? backslashAt : backslashAt < 0 ? percentAt : Math.min(percentAt, backslashAt);
    if (at < 0) return;
    const length = escapeLength(text, at, kinds);
    if (length === 0) {
      from = at + 1;
      continue;
    }
    // The run around the escape: URL and identifier characters on both sides.
    let start = at;
    while (start > 0 && is(text.charCodeAt(start - 1), ESC)) start--;
    let end = at + length;
    while (end < n && is(text.charCodeAt(end), ESC)) end++;
    from = end;
    // A trailing backslash may be escaping the next character (a JSON quote); masking it would break the text.
    while (end > start && text.charCodeAt(end - 1) === 0x5c) end--;
    if (end - start < MIN_DECODED) continue;
    const run = decodeEscapeRun(text, start, end, kinds);
    if (run) onRun(run);
  }
}

/** The escape run text[start, end) decoded, or null when it holds no escape or decodes to nothing. */
function decodeEscapeRun(text: string, start: number, end: number, { percent, hex, unicode }: EscapeKinds): EncodedRun | null {
  const bytes: number[] = [];
  let via: Via | null = null;
  for (let p = start; p < end;) {
    const c = text.charCodeAt(p);
    if (c === 0x25 && unicode && (text.charCodeAt(p + 1) | 0x20) === 0x75) {
      const u = hexAt(text, p + 2, 4);
      if (u >= 0) {
        pushUtf8(bytes, u);
        via ??= 'unicode-escape';
        p += 6;
        continue;
      }
    }
    if (c === 0x25 && percent) {
      const v = hexAt(text, p + 1, 2);
      if (v >= 0) {
        bytes.push(v);
        via ??= 'percent';
        p += 3;
        continue;
      }
    }
    // A doubled backslash before an escape (`\\x73`: the escape written inside a JSON or C string) is one.
    if (c === 0x5c && text.charCodeAt(p + 1) === 0x5c && escapeLength(text, p + 1, { percent, hex, unicode }) > 0) {
      p++;
      continue;
    }
    if (c === 0x5c && p + 1 < end) {
      const next = text.charCodeAt(p + 1);
      const v2 = hex && (next === 0x78 || next === 0x58) ? hexAt(text, p + 2, 2) : -1;
      if (v2 >= 0) {
        bytes.push(v2);
        via ??= 'hex';
        p += 4;
        continue;
      }
      const wide = unicode && next === 0x55 ? hexAt(text, p + 2, 8) : -1;
      if (wide >= 0 && wide <= 0x10ffff) {
        pushUtf8(bytes, wide);
        via ??= 'unicode-escape';
        p += 10;
        continue;
      }
      let u = unicode && next === 0x75 ? hexAt(text, p + 2, 4) : -1;
      if (u >= 0) {
        p += 6;
        // A surrogate pair written as two escapes is one code point.
        if (u >= 0xd800 && u <= 0xdbff && text.charCodeAt(p) === 0x5c && text.charCodeAt(p + 1) === 0x75) {
          const lo = hexAt(text, p + 2, 4);
          if (lo >= 0xdc00 && lo <= 0xdfff) {
            u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            p += 6;
          }
        }
        pushUtf8(bytes, u);
        via ??= 'unicode-escape';
        continue;
      }
    }
    bytes.push(c);
    p++;
  }
  const decodings: Decoded[] = [];
  if (via !== null) pushDecoded(decodings, Uint8Array.from(bytes));
  return decodings.length > 0 ? { start, end, via: via!, decodings } : null;
}

/**
 * Calls `onRun` for every encoded run in `text` that the enabled decoders can decode; base64, hex and base32
 * runs as `found` (what `finder` found already) or `finder` gives them (the compiled scanner), else as scanRuns
 * finds them.
 */
export function forEachEncodedRun(
  text: string,
  decoders: ReadonlySet<Decoder>,
  onRun: (run: EncodedRun) => void,
  finder?: RunFinder,
  found?: ArrayLike<number>,
  masks?: ArrayLike<number>,
): void {
  if (decoders.has('base64') || decoders.has('hex') || decoders.has('base32')) {
    const [base64, hex, base32, compressed] = [decoders.has('base64'), decoders.has('hex'), decoders.has('base32'), decoders.has('compressed')];
    const runs = found ?? finder?.runs?.(text, base64, hex, base32);
    // With `found`, `masks` (the compiled scanner's decodable.rs) says which of a base64 or hex run's readings to decode.
    const m = found ? masks : undefined;
    if (runs) for (let k = 0; k < runs.length; k += 3) decodeFound(text, runs[k]!, runs[k + 1]!, runs[k + 2]!, compressed, onRun, m?.[k / 3]);
    else scanRuns(text, base64, hex, base32, (kind, start, end) => decodeFound(text, kind, start, end, compressed, onRun));
  }
  const kinds = { percent: decoders.has('percent'), hex: decoders.has('hex'), unicode: decoders.has('unicode-escape') };
  if (kinds.percent || kinds.hex || kinds.unicode) scanEscapes(text, kinds, onRun);
}
