/**
 * Private key blocks: PEM (`-----BEGIN [RSA |EC |DSA |ENCRYPTED ]PRIVATE KEY-----`), OpenSSH
 * (`-----BEGIN OPENSSH PRIVATE KEY-----`) and PGP (`-----BEGIN PGP PRIVATE KEY BLOCK-----`), complete or cut
 * off (a header whose body was pasted only in part is still a leaked key).
 *
 * The header is found with one bounded, linear regular expression; the body is then walked line by line in
 * code (a lazy `[\s\S]*?-----END` would rescan the rest of the text for every header). A body line is
 * base64 (possibly several space-separated tokens, as when a key is pasted on one line), a PEM/PGP armour
 * header (`Proc-Type:`, `DEK-Info:`, `Version:` before any base64), or blank. The block ends at the
 * `-----END ...-----` footer, or - cut off - after its last body line. Lines may be separated by real line
 * breaks or by literal `\n` (a key inside a JSON string that was not decoded).
 *
 * A header followed by fewer than 32 base64 characters is not reported: that is code or documentation that
 * names the format (`if (pem.startsWith('-----BEGIN PRIVATE KEY-----'))`), not a key; the pii-passkeys rule
 * flags such references instead.
 *
 * Disguises: the header in any case and with 2 to 10 dashes; lines quoted (`> `), numbered
 * (`12: `, `12 | `), wrapped in backticks or quotes, given as a JSON array of strings, or separated by
 * `<br>`; a line that is not base64 in the middle. When the footer follows the header (within MAX_BLOCK
 * characters, no other header between) and what lies between holds at least MIN_FOOTED_BODY characters of
 * base64 lines, the whole stretch from header to footer is the block, whatever else it holds. Without a
 * header, a base64 run whose first bytes are the DER of a private key (PKCS#1 RSA, PKCS#8, SEC1 EC) or
 * the OpenSSH key magic is a key body.
 */

export interface Block {
  start: number;
  end: number;
}

// 2 to 10 dashes, any case; up to 40 characters of algorithm words. (A key split inside its dashes is
// joined by the boundary pass, which gives the dashes before the split to the block too.)
const HEADER = /(?<!-)-{2,10} ?BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{0,10}/gi;
const FOOTER = /-{2,10} ?END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{0,10}/gi;
const MIN_BODY = 32;
const MAX_BLOCK = 16 * 1024;
const MIN_FOOTED_BODY = 64;
// Line decorations before the base64: quote marks, a line number, a table or list marker.
const LINE_PREFIX = /^[ \t]{0,8}(?:>[ \t]?){0,4}(?:\d{1,5}[ \t]*[:.|)]?[ \t]+)?(?:[|*-][ \t]+)?/;
// Decorations around a token: quotes, backticks, brackets and commas (a JSON array of lines).
const TOKEN_TRIM = /^[[\]"'`,(){}]+|[[\]"'`,(){};]+$/g;
const MAX_BLANK_LINES = 2;

const isBase64Code = (c: number): boolean =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f || c === 0x3d;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x09;

/** Length of `<br>`, `<br/>` or `<br />` at `p` (any case), or 0. */
function brAt(text: string, p: number): number {
  if (text.charCodeAt(p) !== 0x3c || (text.charCodeAt(p + 1) | 0x20) !== 0x62 || (text.charCodeAt(p + 2) | 0x20) !== 0x72) return 0;
  let q = p + 3;
  if (text.charCodeAt(q) === 0x20) q++;
  if (text.charCodeAt(q) === 0x2f) q++;
  return text.charCodeAt(q) === 0x3e ? q + 1 - p : 0;
}

/** End of the line starting at `p`: the next real line break, literal `\n` / `\r`, `<br>`, or a NUL. */
function lineEnd(text: string, p: number): number {
  const n = text.length;
  for (let i = p; i < n; i++) {
    const c = text.charCodeAt(i);
    // A NUL parts two windows of the joined reading (joins.ts), which no block spans: it ends the line, and the walk.
    if (c === 0x0a || c === 0x0d || c === 0x00) return i;
    if (c === 0x5c && i + 1 < n) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x6e || next === 0x72) return i;
    }
    if (c === 0x3c && brAt(text, i) > 0) return i;
  }
  return n;
}

/** Offset after the line separator at `p` (one of \r\n, \n, \r, literal \n, literal \r\n, `<br>`). */
function skipSeparator(text: string, p: number): number {
  const br = brAt(text, p);
  if (br > 0) return p + br + (text.charCodeAt(p + br) === 0x0a ? 1 : 0);
  if (text.charCodeAt(p) === 0x5c) {
    p += 2;
    if (text.charCodeAt(p - 1) === 0x72 && text.charCodeAt(p) === 0x5c && text.charCodeAt(p + 1) === 0x6e) p += 2;
    return p;
  }
  if (text.charCodeAt(p) === 0x0d && text.charCodeAt(p + 1) === 0x0a) return p + 2;
  return p + 1;
}

/**
 * A short token counts as base64 only if it does not read like a word: a cut-off key followed by prose must
 * not swallow the prose. Full-length lines (>= 16) always count.
 */
function looksLikeBase64Token(text: string, s: number, e: number): boolean {
  let upper = 0;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i);
    if (!isBase64Code(c)) return false;
    if (c === 0x2b || c === 0x2f || c === 0x3d || (c >= 0x30 && c <= 0x39)) upper += 2;
    else if (c >= 0x41 && c <= 0x5a) upper++;
  }
  return e - s >= 16 || upper >= 2;
}

/** The longest armour header line taken as one (a `DEK-Info: AES-256-CBC,<32 hex>` line is 54 units). */
const ARMOUR_LINE = 200;

interface BodyScan {
  end: number;
  body: number;
}

/** Walks the body after a header ending at `from`; returns where the block ends and how much base64 it holds. */
function scanBody(text: string, from: number): BodyScan {
  const n = text.length;
  let end = from;
  let body = 0;
  let blanks = 0;
  let p = from;
  let first = true; // the rest of the header's own line
  while (p < n) {
    const le = lineEnd(text, p);
    let q = p;
    if (!first) {
      const prefix = LINE_PREFIX.exec(text.slice(p, Math.min(le, p + 40)));
      if (prefix) q += prefix[0].length;
    }
    let sawToken = false;
    let stop = false;
    while (q < le) {
      while (q < le && isSpace(text.charCodeAt(q))) q++;
      if (q >= le) break;
      let t = q;
      while (t < le && !isSpace(text.charCodeAt(t))) t++;
      // Quotes, backticks, brackets and commas around a line (`"MIIE...",` in a JSON array) are not its content.
      const raw = text.slice(q, t);
      const trimmed = raw.replace(TOKEN_TRIM, '');
      if (trimmed === '') {
        q = t;
        continue;
      }
      const lead = raw.indexOf(trimmed);
      const ts = q + lead;
      const te = ts + trimmed.length;
      // Footer: consume through its closing dashes (looked for within the line, 64 characters at most).
      let dashes = 0;
      while (dashes < 10 && text.charCodeAt(ts + dashes) === 0x2d) dashes++;
      if (
        dashes >= 2 &&
        text
          .slice(ts + dashes, ts + dashes + 4)
          .replace(' ', '')
          .slice(0, 3)
          .toUpperCase() === 'END'
      ) {
        const limit = Math.min(le, ts + 64);
        let close = -1;
        for (let k = ts + dashes + 3; k + 2 <= limit && close < 0; k++) {
          if (text.startsWith('--', k)) close = k;
        }
        let footerEnd = le;
        if (close >= 0) {
          footerEnd = close;
          while (footerEnd < le && text.charCodeAt(footerEnd) === 0x2d) footerEnd++;
        }
        return { end: footerEnd, body };
      }
      if (looksLikeBase64Token(text, ts, te)) {
        body += te - ts;
        end = t;
        sawToken = true;
        q = t;
        continue;
      }
      // Armour header line (before any base64): `Proc-Type: 4,ENCRYPTED`, `Version: GnuPG v2`. Such a line is
      // short (a DEK-Info line with its IV is under 80 units); a longer "line" is prose or code on one line, and
      // taking it whole would mask all of it, and whatever it holds, as the key.
      if (!sawToken && body === 0 && !first && t - q <= 40 && le - q <= ARMOUR_LINE && text.charCodeAt(t - 1) === 0x3a) {
        end = le;
        q = le;
        sawToken = true;
        continue;
      }
      stop = true;
      break;
    }
    if (stop) break;
    if (sawToken) blanks = 0;
    else if (!first && ++blanks > MAX_BLANK_LINES) break;
    first = false;
    if (le >= n || text.charCodeAt(le) === 0x00) break;
    p = skipSeparator(text, le);
  }
  return { end, body };
}

/** The spellings of `BEGIN` a private key header may hold (secrets.ts reads them as an anchor group). */
export const PRIVATE_KEY_HEADER_LITERALS: readonly string[] = ['BEGIN', 'begin', 'Begin'];

/** Can the text hold a private key header at all (one native search per spelling)? */
export function mayHoldPrivateKey(text: string): boolean {
  return PRIVATE_KEY_HEADER_LITERALS.some((w) => text.includes(w));
}

const BASE64_LINE = /[A-Za-z0-9+/=]{16,}/g;

/** Characters of base64 lines (runs of 16 or more) in text[from, to). */
function base64Between(text: string, from: number, to: number): number {
  const re = new RegExp(BASE64_LINE.source, 'g');
  const slice = text.slice(from, to);
  let total = 0;
  for (let m: RegExpExecArray | null; (m = re.exec(slice)) !== null;) total += m[0].length;
  return total;
}

function matchesOf(re: RegExp, text: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  const r = new RegExp(re.source, re.flags);
  for (let m: RegExpExecArray | null; (m = r.exec(text)) !== null;) out.push({ start: m.index, end: m.index + m[0].length });
  return out;
}

/**
 * Every private key block in `text`, in order, not overlapping. `may`: whether the text holds one of
 * PRIVATE_KEY_HEADER_LITERALS, when the caller knows (from the compiled scanner's anchors).
 */
export function findPrivateKeyBlocks(text: string, may = mayHoldPrivateKey(text)): Block[] {
  const blocks: Block[] = [];
  if (!may) return blocks;
  const headers = matchesOf(HEADER, text);
  if (headers.length === 0) return blocks;
  // Footers are found once, in one pass; each header takes the first footer after it.
  const footers = matchesOf(FOOTER, text);
  let f = 0;
  let after = 0;
  headers.forEach((h, i) => {
    if (h.start < after) return;
    while (f < footers.length && footers[f]!.start < h.end) f++;
    const footer = footers[f];
    const nextHeader = headers[i + 1]?.start ?? Infinity;
    if (footer && footer.start - h.end <= MAX_BLOCK && footer.start < nextHeader && base64Between(text, h.end, footer.start) >= MIN_FOOTED_BODY) {
      blocks.push({ start: h.start, end: footer.end });
      after = footer.end;
      return;
    }
    const scan = scanBody(text, h.end);
    if (scan.body >= MIN_BODY) {
      blocks.push({ start: h.start, end: scan.end });
      after = Math.max(scan.end, h.end);
    }
  });
  return blocks;
}

// The base64 starts of private key DER (SEQUENCE, then INTEGER version 0 or 1) and of the OpenSSH magic;
// each candidate is confirmed by decoding its first bytes.
const DER_START = /(?:MII[A-Za-z0-9+/]{9}|MIG[A-Za-z0-9+/]{9}|M[A-H][A-Za-z0-9+/]{10}|b3BlbnNzaC1rZXktdjE)/g;
const MIN_HEADERLESS_BODY = 64;

function isPrivateKeyDer(b: Buffer): boolean {
  if (b[0] !== 0x30) return false;
  // Long-form length (0x81 one byte, 0x82 two bytes) or short form, then INTEGER 0 or 1 (the version).
  const at = b[1] === 0x82 ? 4 : b[1] === 0x81 ? 3 : b[1]! < 0x80 ? 2 : -1;
  return at > 0 && b[at] === 0x02 && b[at + 1] === 0x01 && (b[at + 2] === 0x00 || b[at + 2] === 0x01) && b.length > at + 3;
}

/** What a headerless key body starts with: every match of DER_START holds one of these. */
export const HEADERLESS_KEY_LITERALS: readonly string[] = ['MI', 'MH', 'MC', 'b3BlbnNzaC1'];

/**
 * Every offset of `text` where DER_START matches when tried there, ascending (what the compiled scanner's
 * search finds in its reading of the text, scanner/src/ders.rs).
 */
export function derStarts(text: string): number[] {
  const sticky = new RegExp(DER_START.source, 'y');
  const out: number[] = [];
  for (let p = 0; p < text.length; p++) {
    sticky.lastIndex = p;
    if (sticky.test(text)) out.push(p);
  }
  return out;
}

/** The length of DER_START's match at `p`, where it matches: the OpenSSH magic's, or the DER start's 12. */
const derLength = (text: string, p: number): number => (text.charCodeAt(p) === 0x62 ? 19 : 12);

/**
 * Key bodies without their header: base64 runs that decode to private key DER or an OpenSSH key. `may`:
 * whether the text holds one of HEADERLESS_KEY_LITERALS, when the caller knows; `starts`: derStarts(text),
 * when another engine found them (the compiled scanner's search), walked as the global search walks the
 * text (each search from where the last match, or key block, ended).
 */
export function findHeaderlessKeys(text: string, may = HEADERLESS_KEY_LITERALS.some((w) => text.includes(w)), starts?: ArrayLike<number>): Block[] {
  const blocks: Block[] = [];
  if (!may) return blocks;
  const re = new RegExp(DER_START.source, 'g');
  let lastIndex = 0; // where the next search starts
  let k = 0; // the first of `starts` not passed
  /** Where the next match at or after lastIndex starts (its end becomes lastIndex), or -1. */
  const next = (): number => {
    if (!starts) {
      re.lastIndex = lastIndex;
      const m = re.exec(text);
      if (m === null) return -1;
      lastIndex = re.lastIndex;
      return m.index;
    }
    while (k < starts.length && starts[k]! < lastIndex) k++;
    if (k === starts.length) return -1;
    const p = starts[k++]!;
    lastIndex = p + derLength(text, p);
    return p;
  };
  let after = 0;
  for (let at: number; (at = next()) >= 0;) {
    if (at < after) continue;
    const before = at > 0 ? text.charCodeAt(at - 1) : 0;
    if (isBase64Code(before) && before !== 0x3d) {
      lastIndex = at + 1;
      continue;
    }
    const ok = text.startsWith('b3BlbnNzaC1', at) || isPrivateKeyDer(Buffer.from(text.slice(at, at + 12), 'base64'));
    if (!ok) continue;
    const scan = scanBody(text, at);
    if (scan.body >= MIN_HEADERLESS_BODY) {
      blocks.push({ start: at, end: scan.end });
      after = scan.end;
      lastIndex = Math.max(lastIndex, scan.end);
    }
  }
  return blocks;
}
