/**
 * Deterministic secrets and their evasions, built at test time. Nothing here is a real credential, and no
 * complete key shape appears in the source: prefixes, markers and PEM labels are joined from parts so that
 * secret scanners (GitHub push protection among them) have nothing to flag in the repository.
 */
import type { SecretKind } from '../../../src/guard/index.js';
import { rng } from '../../../scripts/rng.js';

export { rng };

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const B62 = UPPER + LOWER + DIGITS;
const B64URL = B62 + '-_';
const B32 = UPPER + '234567';
const HEX = '0123456789abcdef';

function pick(r: () => number, alphabet: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}

function bytes(r: () => number, n: number, head: number[] = []): Buffer {
  const b = Buffer.alloc(n);
  head.forEach((v, i) => (b[i] = v));
  for (let i = head.length; i < n; i++) b[i] = Math.floor(r() * 256);
  return b;
}

function wrap(s: string, width: number): string {
  const lines: string[] = [];
  for (let i = 0; i < s.length; i += width) lines.push(s.slice(i, i + width));
  return lines.join('\n');
}

export const SK = ['s', 'k', '-'].join('');
const MARKER = ['T3Bl', 'bkFJ'].join('');
const PRIVATE_KEY = ['PRIVATE', 'KEY'].join(' ');
const dashes = '-'.repeat(5);
export const pemHeader = (label: string): string => `${dashes}${'BEGIN'} ${label}${dashes}`;
export const pemFooter = (label: string): string => `${dashes}${'END'} ${label}${dashes}`;

export const AWS_PREFIXES = ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AIPA', 'ANPA', 'ANVA', 'APKA', 'AROA', 'ASCA'];

export interface SecretSample {
  kind: SecretKind;
  name: string;
  value: string;
}

function pem(label: string, body: Buffer, width = 64, armour = ''): string {
  return `${pemHeader(label)}\n${armour}${wrap(body.toString('base64'), width)}\n${pemFooter(label)}`;
}

/** One sample of every secret shape the secret-hygiene rule masks. */
export function secretSamples(): SecretSample[] {
  const r = rng(20261121);
  // A random body that has a digit and a letter, as every real key does.
  const body = (alphabet: string, n: number) => {
    for (;;) {
      const s = pick(r, alphabet, n);
      if (/[0-9]/.test(s) && /[A-Za-z]/.test(s) && /[A-Za-z0-9]{16}/.test(s)) return s;
    }
  };
  const projectStyle = (sub: string) => `${SK}${sub}-${body(B64URL, 74)}${MARKER}${body(B64URL, 74)}`;
  const samples: SecretSample[] = [
    { kind: 'openai-key', name: 'openai legacy', value: `${SK}${body(B62, 20)}${MARKER}${body(B62, 20)}` },
    { kind: 'openai-key', name: 'openai project', value: projectStyle('proj') },
    { kind: 'openai-key', name: 'openai service account', value: projectStyle('svcacct') },
    { kind: 'openai-key', name: 'openai admin', value: projectStyle('admin') },
    { kind: 'openai-key', name: 'sk- 32 hex', value: `${SK}${body(HEX, 32)}` },
  ];
  for (const prefix of AWS_PREFIXES) {
    samples.push({ kind: 'aws-access-key-id', name: `aws ${prefix}`, value: prefix + body(B32, 16) });
  }
  const der = (n: number) => bytes(r, n, [0x30, 0x82, (n - 4) >> 8, (n - 4) & 0xff, 0x02, 0x01, 0x00]);
  samples.push(
    { kind: 'private-key', name: 'pem rsa (pkcs#1)', value: pem(`RSA ${PRIVATE_KEY}`, der(1192)) },
    { kind: 'private-key', name: 'pem pkcs#8', value: pem(PRIVATE_KEY, der(1218)) },
    { kind: 'private-key', name: 'pem ec', value: pem(`EC ${PRIVATE_KEY}`, bytes(r, 121, [0x30, 0x77, 0x02, 0x01, 0x01])) },
    { kind: 'private-key', name: 'pem dsa', value: pem(`DSA ${PRIVATE_KEY}`, der(444)) },
    { kind: 'private-key', name: 'pem encrypted pkcs#8', value: pem(`ENCRYPTED ${PRIVATE_KEY}`, der(1298)) },
    {
      kind: 'private-key',
      name: 'pem legacy encrypted',
      value: pem(`RSA ${PRIVATE_KEY}`, der(1200), 64, `Proc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,${pick(r, HEX, 32).toUpperCase()}\n\n`),
    },
    {
      kind: 'private-key',
      name: 'openssh',
      value: pem(`OPENSSH ${PRIVATE_KEY}`, Buffer.concat([Buffer.from('openssh-key-v1\0'), bytes(r, 380)]), 70),
    },
    {
      kind: 'private-key',
      name: 'pgp',
      value:
        `${pemHeader(`PGP ${PRIVATE_KEY} BLOCK`)}\nVersion: GnuPG v2\n\n` +
        `${wrap(bytes(r, 900, [0x95, 0x03, 0x98]).toString('base64'), 64)}\n=${pick(r, B62, 4)}\n` +
        pemFooter(`PGP ${PRIVATE_KEY} BLOCK`),
    },
    {
      kind: 'private-key',
      name: 'pem header with the body cut off',
      value: `${pemHeader(`RSA ${PRIVATE_KEY}`)}\n${wrap(der(1192).toString('base64'), 64).split('\n').slice(0, 5).join('\n')}`,
    },
  );
  return samples;
}

// ---- evasions: the same secret, written so that it reads the same but matches differently ----------------

const ZERO_WIDTH = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u180e'];
const CYRILLIC: Record<string, string> = {
  A: 'А',
  B: 'В',
  E: 'Е',
  K: 'К',
  M: 'М',
  H: 'Н',
  O: 'О',
  P: 'Р',
  C: 'С',
  T: 'Т',
  X: 'Х',
  a: 'а',
  e: 'е',
  o: 'о',
  p: 'р',
  c: 'с',
  x: 'х',
  y: 'у',
  i: 'і',
  s: 'ѕ',
  j: 'ј',
};
const GREEK: Record<string, string> = {
  A: 'Α',
  B: 'Β',
  E: 'Ε',
  Z: 'Ζ',
  H: 'Η',
  I: 'Ι',
  K: 'Κ',
  M: 'Μ',
  N: 'Ν',
  O: 'Ο',
  P: 'Ρ',
  T: 'Τ',
  Y: 'Υ',
  X: 'Χ',
  o: 'ο',
  v: 'ν',
};

const mapChars = (s: string, f: (c: string, i: number) => string) => [...s].map(f).join('');

export const EVASIONS: Record<string, (s: string) => string> = {
  'zero-width characters': (s) => mapChars(s, (c, i) => (i === 0 ? c : ZERO_WIDTH[i % ZERO_WIDTH.length]! + c)),
  'soft hyphens': (s) => mapChars(s, (c, i) => (i > 0 && i % 2 === 0 ? '\u00ad' + c : c)),
  'fullwidth forms': (s) => mapChars(s, (c) => (c >= '!' && c <= '~' ? String.fromCharCode(c.charCodeAt(0) + 0xfee0) : c)),
  'cyrillic homoglyphs': (s) => mapChars(s, (c) => CYRILLIC[c] ?? c),
  'greek homoglyphs': (s) => mapChars(s, (c) => GREEK[c] ?? c),
  'unicode dashes': (s) => mapChars(s, (c, i) => (c === '-' ? (i % 2 ? '\u2010' : '\u2212') : c)),
  'mathematical bold': (s) =>
    mapChars(s, (c) => {
      const code = c.charCodeAt(0);
      if (code >= 0x41 && code <= 0x5a) return String.fromCodePoint(0x1d400 + code - 0x41);
      if (code >= 0x61 && code <= 0x7a) return String.fromCodePoint(0x1d41a + code - 0x61);
      if (code >= 0x30 && code <= 0x39) return String.fromCodePoint(0x1d7ce + code - 0x30);
      return c;
    }),
  'homoglyphs and zero-width together': (s) => mapChars(s, (c, i) => (i % 3 === 1 ? '\u200d' : '') + (CYRILLIC[c] ?? c)),
};

const percentAll = (s: string) => [...Buffer.from(s)].map((b) => '%' + b.toString(16).toUpperCase().padStart(2, '0')).join('');

export const ENCODINGS: Record<string, (s: string) => string> = {
  base64: (s) => Buffer.from(s).toString('base64'),
  'base64 of an env line': (s) => Buffer.from(`export API_KEY=${s}\n`).toString('base64'),
  'base64 misaligned by a glued character': (s) => 'Q' + Buffer.from(`key=${s}`).toString('base64'),
  base64url: (s) => Buffer.from(`{"key":"${s}"}`).toString('base64url'),
  'base64 wrapped at 76 columns': (s) => wrap(Buffer.from(`credentials:\n${s}\n`).toString('base64'), 76),
  hex: (s) => Buffer.from(s).toString('hex'),
  'hex uppercase': (s) => Buffer.from(s).toString('hex').toUpperCase(),
  'hex byte list': (s) => [...Buffer.from(s)].map((b) => b.toString(16).padStart(2, '0')).join(' '),
  'hex C array': (s) => [...Buffer.from(s)].map((b) => '0x' + b.toString(16).padStart(2, '0')).join(', '),
  'backslash-x escapes': (s) => [...Buffer.from(s)].map((b) => '\\x' + b.toString(16).padStart(2, '0')).join(''),
  'percent-encoded bytes': percentAll,
  'percent-encoded in part': (s) => s.slice(0, 2) + percentAll(s.slice(2, 6)) + s.slice(6).replace(/-/g, '%2D').replace(/\n/g, '%0A').replace(/ /g, '%20'),
  'unicode escapes': (s) => mapChars(s, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')),
  'base64 of percent-encoded': (s) => Buffer.from(percentAll(s)).toString('base64'),
};
