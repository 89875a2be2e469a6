/**
 * The entropy fallback (`generic-secret`): a credential of a provider no pattern knows, recognised the way
 * gitleaks' generic rule and trufflehog's keyword detectors do - by the name it is assigned to and by how
 * random it is. A value is a secret when it is assigned (`=`, `:`, `=>`, `:=`, or after `Bearer`) to a
 * key-like name (`api_key`, `OPENAI_API_KEY`, `client_secret`, `"token":`, `password`, `Authorization:
 * Bearer`), is 20 to 200 characters of the token alphabet, and reads as random: 32 or more hex digits, or
 * at least 3.5 bits of entropy per character with two of upper case, lower case and digits that alternate
 * often. References and placeholders are not values (`${VAR}`, `process.env.X`, `<your key>`, `xxxx`,
 * `***`), nor are UUIDs (ids far more often than keys).
 *
 * The name is found by one case-insensitive pattern of literal alternatives; the rest of its identifier,
 * the assignment and the value are bounded, so each attempt costs a bounded number of steps: linear time.
 */
import type { SecretHit } from './secrets.js';

/**
 * Literals the credential detectors (credentials.ts) start from: a URL's `://`, a SAS `sig=`, the Azure key
 * names, words naming an AWS secret, `.ey`/`.ew` (a JWT's second part), and `pwd`. No two start alike, nor
 * like a keyword below.
 */
export const CREDENTIAL_ANCHORS = [
  '://',
  'sig=',
  '.ey',
  '.ew',
  'AccountKey',
  'accountKey',
  'accountkey',
  'ACCOUNTKEY',
  'SharedAccess',
  'sharedAccess',
  'sharedaccess',
  'SHAREDACCESS',
  'aws',
  'AWS',
  'Aws',
  'ecret_access',
  'ECRET_ACCESS',
  'ecretAccess',
  'ecret access',
  'ecret Access',
  'ecret-access',
  'pwd',
  'Pwd',
  'PWD',
];

const ASSIGNED =
  /(?:api[_-]?key|apikey|secret|token|passw(?:or)?d|credential|auth)[A-Za-z0-9_-]{0,24}["'\]]{0,2}[ \t]{0,3}(?:=>|:=|[:=])[ \t]{0,3}(?:["'`]|bearer[ \t]+)?([A-Za-z0-9+/=_.~-]{20,200})|bearer[ \t]+([A-Za-z0-9+/=_.~-]{20,200})/gi;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HEX = /^[0-9a-fA-F]+$/;
const PLACEHOLDER = /^(?:x{4,}|\*{3,}|your|example|placeholder|changeme|redacted|dummy|sample|test[_-]?key|process\.env|env\.|os\.environ|secrets\.)/i;

/** Shannon entropy of a string, in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < s.length; i++) counts.set(s.charCodeAt(i), (counts.get(s.charCodeAt(i)) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Does a value assigned to a key-like name read as a live credential? */
export function looksLikeSecretValue(v: string): boolean {
  if (PLACEHOLDER.test(v) || UUID.test(v)) return false;
  if (HEX.test(v)) return v.length >= 32;
  let upper = 0,
    lower = 0,
    digit = 0,
    changes = 0,
    prev = -1;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    const k = c >= 0x30 && c <= 0x39 ? 0 : c >= 0x41 && c <= 0x5a ? 1 : c >= 0x61 && c <= 0x7a ? 2 : 3;
    if (k === 0) digit++;
    else if (k === 1) upper++;
    else if (k === 2) lower++;
    if (k !== 3 && prev >= 0 && k !== prev) changes++;
    if (k !== 3) prev = k;
  }
  const classes = (upper > 0 ? 1 : 0) + (lower > 0 ? 1 : 0) + (digit > 0 ? 1 : 0);
  return classes >= 2 && digit > 0 && entropy(v) >= 3.5 && changes >= 0.25 * (v.length - 1);
}

// Where ASSIGNED can match: its alternatives start with one of these words, in one of three casings (found
// by one case-sensitive alternation of literals, far faster than a case-insensitive one read everywhere or a
// lower-cased copy).
// They are also where credentials.ts looks for credential exports, and the literals after them are where its
// other detectors start (CREDENTIAL_ANCHORS): one search serves both. (Words starting with a common letter
// cost the search most: `pass`, `private` were tried and tripled it.)
export const KEYWORDS = [
  ...['api', 'secret', 'token', 'passw', 'credential', 'auth', 'bearer'].flatMap((k) => [k, k.toUpperCase(), k[0]!.toUpperCase() + k.slice(1)]),
  ...CREDENTIAL_ANCHORS,
];
const STICKY = new RegExp(ASSIGNED.source, 'iy');
// Every offset where one of KEYWORDS starts, in one pass instead of one native search per keyword (no two
// keywords start alike, so each offset is found once; the search resumes one past each find, so overlapping
// occurrences are all found, as the searches per keyword found them).
const KEYWORD = new RegExp(KEYWORDS.map((k) => k.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'), 'g');

/** Ascending offsets where a keyword starts (what a search per keyword, sorted, gives). */
export function keywordStarts(text: string): number[] {
  const starts: number[] = [];
  const re = KEYWORD;
  re.lastIndex = 0;
  for (let m: RegExpExecArray | null; (m = re.exec(text)) !== null;) {
    starts.push(m.index);
    re.lastIndex = m.index + 1;
  }
  return starts;
}

export function findGenericSecrets(text: string, hits: SecretHit[], starts: readonly number[] = keywordStarts(text)): void {
  if (starts.length === 0) return;
  const re = STICKY;
  let after = 0;
  for (const at of starts) {
    if (at < after) continue;
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) continue;
    after = m.index + m[0].length;
    let value = m[1] ?? m[2]!;
    // Trailing dots and dashes belong to the sentence or the syntax around the value.
    value = value.replace(/[._~-]+$/, '');
    if (value.length < 20 || !looksLikeSecretValue(value)) continue;
    const end = m.index + m[0].length - ((m[1] ?? m[2]!).length - value.length);
    hits.push({ kind: 'generic-secret', start: end - value.length, end });
  }
}
