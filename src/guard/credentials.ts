/**
 * Credentials that are not a provider's token: the kinds gitleaks and trufflehog ship rules for beside the
 * token formats - a password inside a URL, the secret of a connection string, a JSON Web Token, an AWS
 * secret access key next to what names it, and the values of CSV and INI credential exports. Their value
 * has no prefix of its own (a database password may be `hunter2hunter2`), so each is recognised by where it
 * stands, and each hit covers the secret alone: the user name, the host and the other fields stay readable.
 *
 *  - url-password: `scheme://user:password@host` (postgres, mysql, mongodb+srv, redis, amqp, any scheme):
 *    the password, up to the last `@` before the host.
 *  - connection-string: `AccountKey=`, `SharedAccessKey=`, `SharedAccessSignature=` values (Azure storage,
 *    Service Bus, Event Hubs, IoT Hub), and `Password=`/`Pwd=` in an ADO.NET or ODBC string (one that also
 *    names a server, host, data source or user), the value bare, quoted or in ODBC's braces.
 *  - jwt: `eyJ...` header, `.eyJ...` payload and a signature of at least 16 characters, whole (a long
 *    token's signature is past where the bearer fallback's 200 characters end).
 *  - aws-secret-key: 40 characters of base64 with upper case, lower case and digits, within 512
 *    characters after an AWS key id or a name for it (`aws_secret_access_key`, `SecretAccessKey`,
 *    `Secret access key` in the console's CSV export).
 *  - password: in a CSV export, the cells under a `Password`/`Secret access key`/`Client secret`/...
 *    header; in an INI file (a text with a `[section]` line), a value assigned to a password-like name
 *    (`password`, `passwd`, `pwd`, `secret_key`, `client_secret`, `api_key`, `access_token`).
 *
 * Placeholders are not secrets (`${PGPASSWORD}`, `<password>`, `****`, `xxxx`, `changeme`, `password`).
 * Linear time: every pattern starts at a literal or a line start, its repetitions are bounded, and the
 * context checks read a bounded window or a list of positions once.
 */
import type { SecretHit } from './secrets.js';
import type { SecretKind } from './types.js';

const PLACEHOLDER =
  /^(?:\*+|x+|X+|\.{2,}|…|-+|_+|<[^>]*>|\[[^\]]*\]|\{\{?[^}]*\}\}?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\)?|\$\([^)]*\)|%\(?[A-Za-z_]*\)?s|%[A-Z_]+%|:[A-Za-z_]+|[0-9]{1,6}|(?:your|my|the|some|example|sample|dummy|fake|test|placeholder)[A-Za-z0-9_-]*|pass(?:word|wd)?|pwd|secret|changeme|p@ssw0rd|passw0rd|hunter2|admin|root|guest|postgres|mysql|redis|user(?:name)?|true|false|null|none|yes|no)$/i;

/** A value that only stands for a secret (a reference, a placeholder, a bare word). */
export function isPlaceholder(value: string): boolean {
  // An upper-case identifier (`DB_PASSWORD`) names a variable; the pattern above is case-insensitive.
  return PLACEHOLDER.test(value) || /^[A-Z][A-Z0-9_]*$/.test(value);
}

// ---- passwords in URLs -----------------------------------------------------------------------------

// The password runs to the last `@` before the host (an unescaped `@` in it is common); bounded, so a run of
// `@`s costs a bounded number of steps per `://`.
// Matched from the scheme's start, found by searching for `://` (a pattern tried at every word would cost a
// scheme's worth of steps per word).
// A password may hold `'` (an RFC 3986 sub-delimiter) and `#` (not legal unescaped, but no more so than the
// `@` taken above, and written so in configs), except that a URL opened by `'` ends at the next `'`: in
// `['http://host:8080','admin@example.org']` the quote closes the URL, it is not in a password.
const URL_CREDENTIAL = /[A-Za-z][A-Za-z0-9+.-]{1,24}:\/\/[^\s:@/?#'"`<>]{0,128}:([^\s/?"`<>]{1,256})@(?=[A-Za-z0-9[])/y;
const URL_CREDENTIAL_IN_QUOTES = /[A-Za-z][A-Za-z0-9+.-]{1,24}:\/\/[^\s:@/?#'"`<>]{0,128}:([^\s/?'"`<>]{1,256})@(?=[A-Za-z0-9[])/y;
const isSchemeCode = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2b || c === 0x2e || c === 0x2d;

// A password in a URL's query (JDBC's `?user=app&password=...`).
// Matched from the parameter's name, found from the key-like words (generic.ts keywordStarts) and `sig=`.
const URL_QUERY = /(?:password|passwd|pwd|pass|client_secret|access_token|api_?key|apikey|auth_?token|token|sig)=([^&;#\s"'`<>]{4,512})/iy;
const isParamCode = (c: number): boolean => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;

function findUrlPasswords(text: string, hits: SecretHit[], starts: readonly number[], anchors: Anchors): void {
  for (const at of anchors.url) {
    let start = at;
    while (start > 0 && at - start < 25 && isSchemeCode(text.charCodeAt(start - 1))) start--;
    if (start > 0 && isSchemeCode(text.charCodeAt(start - 1))) continue;
    const re = start > 0 && text.charCodeAt(start - 1) === 0x27 ? URL_CREDENTIAL_IN_QUOTES : URL_CREDENTIAL;
    re.lastIndex = start;
    const m = re.exec(text);
    if (!m) continue;
    const password = m[1]!;
    if (password.length < 3 || isPlaceholder(password)) continue;
    const end = m.index + m[0].length - 1;
    hits.push({ kind: 'url-password', start: end - password.length, end });
  }
  const q = URL_QUERY;
  const at: number[] = [...starts];
  at.push(...anchors.sig);
  let after = -1;
  for (const p of at) {
    // The parameter's name starts after `?` or `&` (a key-like word may be the end of it: `access_token`).
    let s = p;
    while (s > 0 && p - s < 16 && isParamCode(text.charCodeAt(s - 1))) s--;
    const c = text.charCodeAt(s - 1);
    if (s <= after || (c !== 0x3f && c !== 0x26)) continue;
    q.lastIndex = s;
    const m = q.exec(text);
    if (!m) continue;
    after = s;
    const value = m[1]!;
    const name = m[0].slice(0, m[0].indexOf('=')).toLowerCase();
    // Tokens and keys must read random; a password need only be a password.
    if (isPlaceholder(value) || (!name.startsWith('pass') && name !== 'pwd' && (value.length < 16 || !/[0-9]/.test(value)))) continue;
    const end = m.index + m[0].length;
    hits.push({ kind: 'url-password', start: end - value.length, end });
  }
}

// ---- connection strings ------------------------------------------------------------------------------

// `Name=value`, the value bare or quoted (ADO.NET quotes a value holding `;`, ODBC puts it in braces, a `}`
// inside written `}}`); or JSON/YAML `"AccountKey": "..."`.
// Matched where a name can start: the key-like words `pass`/`pwd`, and the Azure names found by search.
const KEYED =
  /(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd)(?:[ \t]{0,2}=[ \t]{0,2}(?:"([^"\r\n]{1,256})"|'([^'\r\n]{1,256})'|\{((?:[^{}\r\n]|\}\}){1,256})\}(?=[;'"\s]|$)|([^;"'\s<>]{1,1024}))|["']?[ \t]{0,2}:[ \t]{0,2}["']([A-Za-z0-9+/_-]{20,1024}={0,2})["'])/iy;

// In braces, what reads as a format string's field rather than a password: `{0}`, `{password}`, `{db_pass}`,
// `{self.pwd}` (a program's template, filled in later) - a lower-case name or a number, with a format spec.
const FORMAT_FIELD = /^(?:[a-z_][a-z0-9_.]*|[0-9]+)(?::[^}]*)?$/;

// What makes `Password=` part of a connection string rather than a shell or .env assignment.
const CONNECTION_CONTEXT = /(?:server|data source|host|hostname|address|addr|user id|uid|user|username|database|initial catalog|dsn|driver)[ \t]{0,2}=/i;

function findConnectionStrings(text: string, hits: SecretHit[], hints: readonly number[], anchors: Anchors): void {
  const re = KEYED;
  const at = [...hints, ...anchors.azure];
  for (const p of at) {
    re.lastIndex = p;
    const m = re.exec(text);
    if (!m) continue;
    const value = m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5]!;
    const name = m[0].slice(0, 3).toLowerCase();
    if (isPlaceholder(value) || (m[3] !== undefined && FORMAT_FIELD.test(value))) continue;
    if (m[5] !== undefined) {
      // The JSON form names keys only (a JSON "password" is the assignment detectors' business).
      if (name === 'pas' || name === 'pwd') continue;
    } else if (name === 'pas' || name === 'pwd') {
      // Password=/Pwd= counts inside a `key=value;` string that also names where to connect.
      const before = text.slice(Math.max(0, m.index - 256), m.index);
      const after = text.slice(m.index + m[0].length, m.index + m[0].length + 256);
      const semicolon = before.endsWith(';') || /;[ \t]{0,2}$/.test(before) || after.startsWith(';');
      if (!semicolon || !(CONNECTION_CONTEXT.test(before) || CONNECTION_CONTEXT.test(after))) continue;
      if (value.length < 4) continue;
    } else if (name === 'sha' && m[0].slice(12, 13).toLowerCase() === 's') {
      // SharedAccessSignature=sv=...&sig=...: a query string whose signature is the secret.
      if (value.length < 20 || !value.includes('sig=')) continue;
    } else if (value.length < 20 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
      // An account or shared access key is base64.
      continue;
    }
    const end = m.index + m[0].length - (m[4] !== undefined ? 0 : 1);
    hits.push({ kind: 'connection-string', start: end - value.length, end });
  }
}

// ---- JSON Web Tokens ----------------------------------------------------------------------------------

// A JSON object's base64url starts `ey` (`{"`, `{ "`) or `ew` (`{` and a line break).
const JWT = /(?<![A-Za-z0-9_-])e[yw][A-Za-z0-9_-]{8,16384}\.e[yw][A-Za-z0-9_-]{2,65536}\.[A-Za-z0-9_-]{16,4096}(?![A-Za-z0-9_-])/g;
const JOSE_HEADER = /^\s*\{[\s\S]*"alg"\s*:/;

function findJwts(text: string, hits: SecretHit[]): void {
  if (!text.includes('ey') && !text.includes('ew')) return;
  const re = JWT;
  re.lastIndex = 0;
  for (let m: RegExpExecArray | null; (m = re.exec(text)) !== null;) {
    // The header is a JOSE header: JSON naming its algorithm.
    const header = Buffer.from(m[0].slice(0, m[0].indexOf('.')), 'base64url').toString('latin1');
    if (JOSE_HEADER.test(header)) hits.push({ kind: 'jwt', start: m.index, end: m.index + m[0].length });
  }
  if (text.includes('\n')) findWrappedJwts(text, hits);
}

// A JWT wrapped at a column: the same three parts with line breaks anywhere in them (none of the parts holds
// a dot, so each still ends at one), its lines counted from where it starts. Its header is read up to 256 characters (`alg`, `typ`,
// `kid`; a JOSE header with a certificate chain is longer, and is not read wrapped): each line that starts `ey`
// in a long run of base64url lines is read that far before the attempt fails, so the bound keeps the cost of
// such a text (crafted: every line `ey…`) within a few times the unwrapped reading's; a start is tried only when
// its line from there is as wide as a column may be (16 to 80) and ends in a line break: short lines cost a glance.
const WRAPPED_UNIT = '(?:[A-Za-z0-9_-]|\\r?\\n)';
const WRAPPED_JWT = new RegExp(
  `(?<![A-Za-z0-9_-])(?=[A-Za-z0-9_.-]{16,80}\\r?\\n)e[yw]${WRAPPED_UNIT}{8,256}\\.(?:\\r?\\n)?e(?:\\r?\\n)?[yw]${WRAPPED_UNIT}{2,65536}\\.${WRAPPED_UNIT}{16,4096}`,
  'g',
);
const WHOLE_JWT = new RegExp(`^${JWT.source.slice(JWT.source.indexOf(')') + 1)}$`);
/** The columns a key is wrapped at (as the laced readings: up to 80 wide). */
const MIN_COLUMN = 16;
const MAX_COLUMN = 80;

/**
 * Wrapped tokens: every line of the token but its last is as wide as its first (the column, 16 to 80), the
 * last no wider. The lines are taken while they keep the column, so the prose on the line after a token is
 * not read as more of its signature unless it is exactly as wide; a token whose first line is a whole JWT is
 * the unwrapped reading's (the next line is not more of it).
 */
function findWrappedJwts(text: string, hits: SecretHit[]): void {
  const re = WRAPPED_JWT;
  re.lastIndex = 0;
  for (let m: RegExpExecArray | null; (m = re.exec(text)) !== null;) {
    const lines = m[0].split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
    const column = lines[0]!.length;
    if (lines.length < 2 || column < MIN_COLUMN || column > MAX_COLUMN || WHOLE_JWT.test(lines[0]!)) continue;
    let n = 1;
    while (n < lines.length && lines[n]!.length === column) n++;
    if (n < lines.length && lines[n]!.length > 0 && lines[n]!.length < column) n++;
    const token = lines.slice(0, n).join('');
    if (!WHOLE_JWT.test(token)) continue;
    const header = Buffer.from(token.slice(0, token.indexOf('.')), 'base64url').toString('latin1');
    if (!JOSE_HEADER.test(header)) continue;
    let end = m.index;
    for (let i = 0; i < n; i++) end = text.indexOf(lines[i]!, end) + lines[i]!.length;
    hits.push({ kind: 'jwt', start: m.index, end });
  }
}

// ---- AWS secret access keys -----------------------------------------------------------------------------

const AWS_SECRET = /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g;
// What names an AWS secret nearby: a key id (any documented prefix, either case) or the secret's own names.
// Literal alternatives in the casings people write (a case-sensitive alternation of literals is far cheaper
// than a case-insensitive pattern tried at every character).
// Besides the key ids found before this pass (`ids`): the words that name an AWS secret.

const AWS_WINDOW = 512;
/** The units a window after a place that names AWS reads: the key may start up to AWS_WINDOW after it. */
const AWS_SPAN = AWS_WINDOW + 40;
const isBase64Code = (c: number): boolean =>
  (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x2b || c === 0x2f || c === 0x3d;

/**
 * Where the AWS secret keys in the windows after the places in `context` (ascending) start: the reference
 * of the compiled scanner's reading (scanner/src/aws.rs), which CredentialPasses.awsSecrets hands back.
 */
export function awsSecretStarts(text: string, context: readonly number[]): number[] {
  const out: number[] = [];
  // Only the windows after the context are read, each once (windows that overlap are read as one).
  const secret = AWS_SECRET;
  let from = 0;
  for (let k = 0; k < context.length;) {
    const start = Math.max(from, context[k]!);
    let end = Math.min(text.length, context[k]! + AWS_SPAN);
    while (++k < context.length && context[k]! <= end) end = Math.min(text.length, context[k]! + AWS_SPAN);
    // The window alone (a search in the whole text would run on past the window to the next match); the
    // characters just outside it decide whether a match at its edges is a longer run's part.
    const window = text.slice(start, end);
    secret.lastIndex = 0;
    for (let m: RegExpExecArray | null; (m = secret.exec(window)) !== null;) {
      const v = m[0];
      const at = start + m.index;
      if (isBase64Code(text.charCodeAt(at - 1)) || isBase64Code(text.charCodeAt(at + 40))) continue;
      if (/[A-Z]/.test(v) && /[a-z]/.test(v) && /[0-9]/.test(v)) out.push(at);
    }
    from = end;
  }
  return out;
}

function findAwsSecrets(text: string, hits: SecretHit[], anchors: Anchors, passes: CredentialPasses | undefined): void {
  const context: number[] = [...anchors.aws];
  for (const h of hits) if (h.kind === 'aws-access-key-id') context.push(h.end);
  if (context.length === 0) return;
  context.sort((a, b) => a - b);
  const starts = passes?.awsSecrets?.(text, context) ?? awsSecretStarts(text, context);
  for (let k = 0; k < starts.length; k++) hits.push({ kind: 'aws-secret-key', start: starts[k]!, end: starts[k]! + 40 });
}

// ---- CSV and INI credential exports ------------------------------------------------------------------

const CSV_SECRET_COLUMN =
  /^(?:password|passwd|secret access key|secret_access_key|secretaccesskey|secret key|secret|client secret|client_secret|api key|api_key|token|access token|private key)$/i;
const MAX_CSV_ROWS = 10_000;
const CSV_HEADER_CELL =
  /(?:^|[,;\t])[ "]*(?:password|passwd|secret access key|secret_access_key|secretaccesskey|secret key|secret|client secret|client_secret|api key|api_key|token|access token|private key)[ "\r]*(?:[,;\t]|$)/i;

/** The cells of one CSV line, with their offsets in `text` (quotes around a cell are not part of it). */
function csvCells(text: string, start: number, end: number, delimiter: number): Array<[number, number]> {
  const cells: Array<[number, number]> = [];
  let s = start;
  for (let i = start; i <= end; i++) {
    if (i === end || text.charCodeAt(i) === delimiter) {
      let a = s;
      let b = i;
      while (a < b && (text.charCodeAt(a) === 0x20 || text.charCodeAt(a) === 0x22)) a++;
      while (b > a && (text.charCodeAt(b - 1) === 0x20 || text.charCodeAt(b - 1) === 0x22 || text.charCodeAt(b - 1) === 0x0d)) b--;
      cells.push([a, b]);
      s = i + 1;
    }
  }
  return cells;
}

// Commas, or the semicolons and tabs of spreadsheets saved in other locales.
const DELIMITERS = [0x2c, 0x3b, 0x09];

/**
 * The lines holding a hint (ascending starts), each once: the reference of the compiled scanner's reading
 * (scanner/src/csv.rs), which CredentialPasses.csvLines hands back with `csvHeader` of each line.
 */
export function hintedLines(text: string, hints: readonly number[]): number[] {
  const starts: number[] = [];
  let lastEnd = -1;
  for (const h of hints) {
    if (h < lastEnd) continue;
    starts.push(text.lastIndexOf('\n', h - 1) + 1);
    const e = text.indexOf('\n', h);
    lastEnd = e < 0 ? text.length : e;
  }
  return starts;
}

/**
 * Whether the line text[start, end) has a secret column's name between delimiters (only such a line can be
 * a CSV export's header): the reference of the compiled scanner's reading (scanner/src/csv.rs).
 */
export function csvHeader(text: string, start: number, end: number): boolean {
  return CSV_HEADER_CELL.test(text.slice(start, end));
}

/** The hinted lines' starts, and of each line whether it may be a CSV header (1) or not (0), when known. */
interface Lines {
  starts: readonly number[];
  headers: ArrayLike<number> | undefined;
}

function findCsvExports(text: string, lines: Lines, hits: SecretHit[]): void {
  for (const d of DELIMITERS) if (text.includes(String.fromCharCode(d))) findCsvExportsBy(text, lines, d, hits);
}

function findCsvExportsBy(text: string, lines: Lines, delimiter: number, hits: SecretHit[]): void {
  const n = text.length;
  let done = 0; // rows up to here were read under an earlier header
  const { starts, headers } = lines;
  for (let k = 0; k < starts.length; k++) {
    let lineStart = starts[k]!;
    // Only a line with a secret column's name between delimiters can be a header (when the other engine has
    // said which lines may be, the others are passed before their ends are looked for).
    if (lineStart < done || (headers && headers[k] !== 1)) continue;
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = n;
    if (!headers && !csvHeader(text, lineStart, lineEnd)) continue;
    const header = csvCells(text, lineStart, lineEnd, delimiter);
    const columns: Array<{ index: number; kind: SecretKind }> = [];
    if (header.length >= 2 && header.length <= 64) {
      header.forEach(([a, b], index) => {
        const name = text.slice(a, b);
        if (CSV_SECRET_COLUMN.test(name)) columns.push({ index, kind: /secret.?access.?key/i.test(name) ? 'aws-secret-key' : 'password' });
      });
    }
    lineStart = lineEnd + 1;
    if (columns.length === 0) continue;
    // The rows under the header: as many cells as it has, until a line that is not.
    for (let rows = 0; rows < MAX_CSV_ROWS && lineStart < n; rows++) {
      let rowEnd = text.indexOf('\n', lineStart);
      if (rowEnd < 0) rowEnd = n;
      const cells = csvCells(text, lineStart, rowEnd, delimiter);
      if (cells.length !== header.length) break;
      for (const { index, kind } of columns) {
        const [a, b] = cells[index]!;
        const value = text.slice(a, b);
        if (value.length >= 4 && !/\s/.test(value) && !isPlaceholder(value)) hits.push({ kind, start: a, end: b });
      }
      lineStart = rowEnd + 1;
    }
    done = lineStart;
  }
}

const INI_SECTION = /\[[A-Za-z0-9 _.:-]{1,64}\][ \t]*\r?$/m;
const INI_LINE = /[ \t]*([A-Za-z0-9_.-]{1,64})[ \t]*[=:][ \t]*("?)([^\s"#;]{4,256})\2[ \t]*(?:[#;][^\r\n]*)?\r?$/my;
const INI_NAME =
  /(?:^|[_.-])(?:password|passwd|pass|pwd|secret[_-]?key|secret[_-]?access[_-]?key|client[_-]?secret|api[_-]?key|apikey|access[_-]?token|auth[_-]?token|private[_-]?key)$/i;

/**
 * Whether `text` holds an INI `[section]` line, so that its lines are read as an INI file's: the reference of
 * the compiled scanner's reading (scanner/src/ini.rs), which CredentialPasses.iniSection hands back.
 */
export function iniSection(text: string): boolean {
  return INI_SECTION.test(text);
}

function findIniExports(text: string, lines: readonly number[], hits: SecretHit[], passes: CredentialPasses | undefined): void {
  if (!text.includes('[') || !(passes?.iniSection?.(text) ?? iniSection(text))) return;
  const re = INI_LINE;
  for (const lineStart of lines) {
    re.lastIndex = lineStart;
    const m = re.exec(text);
    if (!m || !INI_NAME.test(m[1]!)) continue;
    const value = m[3]!;
    if (isPlaceholder(value)) continue;
    const start = m.index + m[0].indexOf(value, m[1]!.length);
    hits.push({ kind: /secret.?access.?key/i.test(m[1]!) ? 'aws-secret-key' : 'password', start, end: start + value.length });
  }
}

// Outside an INI file: a value assigned to a name that ends in password (`POSTGRES_PASSWORD=`, `db_password:`,
// `"adminPassword": "..."`), when it reads as a password - 8 or more characters mixing letters with digits or
// symbols, not a reference or a placeholder.
// Matched just after the name, found by the hint search (the name ends in one of the hint words).
const PASSWORD_VALUE = /["']?[ \t]{0,2}[=:][ \t]{0,2}(["']?)([^\s"'`,;<>()[\]{}]{8,128})\1(?![^\s"'`,;<>])/y;
const PASSWORD_NAME_END = /^(?:password|passwd|pwd)/i;

function findAssignedPasswords(text: string, hints: readonly number[], hits: SecretHit[]): void {
  const re = PASSWORD_VALUE;
  for (const h of hints) {
    const word = PASSWORD_NAME_END.exec(text.slice(h, h + 8));
    if (!word) continue;
    re.lastIndex = h + word[0].length;
    const m = re.exec(text);
    if (!m) continue;
    const value = m[2]!;
    if (isPlaceholder(value) || !/[A-Za-z]/.test(value) || !/[^A-Za-z]/.test(value) || /^[$%{<(]/.test(value) || /^[A-Za-z_]+\.[A-Za-z_.]+$/.test(value))
      continue;
    if (encodesPlaceholder(value)) continue;
    const end = m.index + m[0].length - m[1]!.length;
    hits.push({ kind: 'password', start: end - value.length, end });
  }
}

// A Kubernetes Secret's `data:` holds each value in base64: `password: Y2hhbmdlbWU=` is the password
// `changeme`. The encoding of a real password is masked like the password (anyone decodes it), but the encoding
// of a placeholder is a placeholder. Only canonical base64 (padded to a multiple of 4) whose decoding is
// printable ASCII is decoded, and only to ask isPlaceholder.
const BASE64_VALUE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function encodesPlaceholder(value: string): boolean {
  if (value.length % 4 !== 0 || !BASE64_VALUE.test(value)) return false;
  const decoded = Buffer.from(value, 'base64').toString('latin1');
  return /^[\x20-\x7e]+$/.test(decoded) && isPlaceholder(decoded);
}

// Where a credential export's names and headers can be: the words they contain.
// The key-like words that name a credential export's values and columns.
const HINT = /^(?:passw|pwd|secret|token|api[ _-]?key)/i;

function hintsOf(text: string, starts: readonly number[]): number[] {
  const out: number[] = [];
  for (const at of starts) if (HINT.test(text.slice(at, at + 11))) out.push(at);
  return out;
}

/** What another engine reads instead of this module (the compiled scanner, compiled.ts); the same results. */
export interface CredentialPasses {
  /** awsSecretStarts, or null when this module is to read the text (a short one). */
  awsSecrets?(text: string, context: readonly number[]): ArrayLike<number> | null;
  /**
   * hintedLines, with csvHeader of each line (1 or 0); null when this module is to read the text (a short
   * one, or one the other engine does not hold).
   */
  csvLines?(text: string, hints: readonly number[]): { starts: number[]; headers: ArrayLike<number> } | null;
  /** iniSection, or null when this module is to read the text (a short one). */
  iniSection?(text: string): boolean | null;
}

interface Anchors {
  /** Offsets of `://`. */
  url: number[];
  /** Offsets of `sig=`. */
  sig: number[];
  /** Offsets of AccountKey / SharedAccess names. */
  azure: number[];
  /** Offsets just after a word that names an AWS secret (`aws`, `secret_access`, `SecretAccess` ...). */
  aws: number[];
  /** Whether `.ey` or `.ew` occurs (a JWT's second part starts so). */
  jwt: boolean;
}

// Everything the detectors above start from that is not a key-like word (generic.ts CREDENTIAL_ANCHORS): found
// by the same one search as the key-like words (a search per literal was a pass each, most of these
// detectors' cost on a large request), told apart here by what is at each offset.
function anchorsOf(text: string, starts: readonly number[]): Anchors {
  const a: Anchors = { url: [], sig: [], azure: [], aws: [], jwt: false };
  for (const at of starts) {
    const c = text.charCodeAt(at);
    const d = text.charCodeAt(at + 1) | 0x20;
    if (c === 0x3a) a.url.push(at);
    else if (c === 0x2e) a.jwt = true;
    else if ((c | 0x20) === 0x73 && d === 0x69 && text.startsWith('sig=', at)) a.sig.push(at);
    else if (((c | 0x20) === 0x61 && d === 0x63) || ((c | 0x20) === 0x73 && d === 0x68)) a.azure.push(at);
    else if ((c | 0x20) === 0x61 && d === 0x77) a.aws.push(at + 3);
    else if ((c | 0x20) === 0x65 && d === 0x63) a.aws.push(at + 11);
  }
  return a;
}

/**
 * The credentials above that `kinds` asks for, as hits in `text`. `starts`: where the entropy fallback's
 * key-like words start (generic.ts keywordStarts; with `passw`, `pwd` and the anchors), the only places a
 * credential export's names and headers can be. `passes`: the compiled scanner's reading of the AWS
 * secret keys' windows, the INI section line, the hinted lines and their CSV headers (absent: read here).
 */
export function findCredentials(text: string, kinds: ReadonlySet<SecretKind>, hits: SecretHit[], starts: readonly number[], passes?: CredentialPasses): void {
  const hints = hintsOf(text, starts);
  const anchors = anchorsOf(text, starts);
  if (kinds.has('url-password')) findUrlPasswords(text, hits, starts, anchors);
  if (kinds.has('connection-string')) findConnectionStrings(text, hits, hints, anchors);
  if (kinds.has('jwt') && anchors.jwt) findJwts(text, hits);
  if (kinds.has('aws-secret-key')) findAwsSecrets(text, hits, anchors, passes);
  if (kinds.has('password') || kinds.has('aws-secret-key')) {
    if (hints.length === 0) return;
    const lines: Lines = passes?.csvLines?.(text, hints) ?? { starts: hintedLines(text, hints), headers: undefined };
    const csv: SecretHit[] = [];
    findCsvExports(text, lines, csv);
    findIniExports(text, lines.starts, csv, passes);
    findAssignedPasswords(text, hints, csv);
    for (const h of csv) if (kinds.has(h.kind)) hits.push(h);
  }
}
