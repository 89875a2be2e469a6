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
 */

export interface Block {
  start: number;
  end: number;
}

// Exactly five dashes open the header (fewer would let the second half of a key split inside its dashes
// match on its own, leaving the first half unmasked); up to 40 characters of algorithm words.
const HEADER = /-{5} ?BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)? ?-{0,5}/g;
const MIN_BODY = 32;
const MAX_BLANK_LINES = 2;

const isBase64Code = (c: number): boolean =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f || c === 0x3d;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x09;

/** End of the line starting at `p`: the next real line break or literal `\n` / `\r`. */
function lineEnd(text: string, p: number): number {
  const n = text.length;
  for (let i = p; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) return i;
    if (c === 0x5c && i + 1 < n) {
      const next = text.charCodeAt(i + 1);
      if (next === 0x6e || next === 0x72) return i;
    }
  }
  return n;
}

/** Offset after the line separator at `p` (one of \r\n, \n, \r, literal \n, literal \r\n). */
function skipSeparator(text: string, p: number): number {
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
    let sawToken = false;
    let stop = false;
    while (q < le) {
      while (q < le && isSpace(text.charCodeAt(q))) q++;
      if (q >= le) break;
      let t = q;
      while (t < le && !isSpace(text.charCodeAt(t))) t++;
      // Footer: consume through its closing dashes (looked for within the line, 64 characters at most).
      let dashes = 0;
      while (dashes < 5 && text.charCodeAt(q + dashes) === 0x2d) dashes++;
      if (dashes >= 3 && text.startsWith('END', q + dashes)) {
        const limit = Math.min(le, q + 64);
        let close = -1;
        for (let k = q + dashes + 3; k + 3 <= limit && close < 0; k++) {
          if (text.startsWith('---', k)) close = k;
        }
        let footerEnd = le;
        if (close >= 0) {
          footerEnd = close;
          while (footerEnd < le && text.charCodeAt(footerEnd) === 0x2d) footerEnd++;
        }
        return { end: footerEnd, body };
      }
      if (looksLikeBase64Token(text, q, t)) {
        body += t - q;
        end = t;
        sawToken = true;
        q = t;
        continue;
      }
      // Armour header line (before any base64): `Proc-Type: 4,ENCRYPTED`, `Version: GnuPG v2`.
      if (!sawToken && body === 0 && !first && t - q <= 40 && text.charCodeAt(t - 1) === 0x3a) {
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
    if (le >= n) break;
    p = skipSeparator(text, le);
  }
  return { end, body };
}

/** Every private key block in `text`, in order, not overlapping. */
/** Can the text hold a private key header at all (one native search per spelling)? */
export function mayHoldPrivateKey(text: string): boolean {
  return text.includes('BEGIN') || text.includes('begin') || text.includes('Begin');
}

export function findPrivateKeyBlocks(text: string): Block[] {
  const blocks: Block[] = [];
  if (!mayHoldPrivateKey(text)) return blocks;
  const re = new RegExp(HEADER.source, 'g');
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const headerEnd = m.index + m[0].length;
    const scan = scanBody(text, headerEnd);
    if (scan.body >= MIN_BODY) {
      blocks.push({ start: m.index, end: scan.end });
      re.lastIndex = Math.max(scan.end, headerEnd);
    }
  }
  return blocks;
}
