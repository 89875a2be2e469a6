/**
 * An attack found in review, as data: provider tokens of every shape the scanner knows (GitHub and npm tokens carry
 * a valid CRC32 checksum), and the reformattings that got 47 of 61 variants past the scanner - separators
 * inside a key, confusables beyond the old hand table, encodings that were not decoded, AWS ids in lower
 * case, glued or grouped, private keys in disguise - plus variants of our own. Nothing here is a real
 * credential; prefixes and PEM labels are joined from parts so secret scanners have nothing to flag.
 */
import { createRequire } from 'node:module';
import { deflateSync, gzipSync } from 'node:zlib';
import { base62Crc32 } from '../../../src/guard/providers.js';
import type { SecretKind } from '../../../src/guard/index.js';
import { pemFooter, pemHeader, rng, type SecretSample } from './secrets.js';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';
const B62 = UPPER + LOWER + DIGITS;

function pick(r: () => number, alphabet: string, n: number): string {
  for (;;) {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
    if (alphabet !== B62 || (/[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s))) return s;
  }
}
const j = (...parts: string[]) => parts.join('');

const b64url = (s: string) => Buffer.from(s).toString('base64url');
const jwt = (subject: string, signature: string) =>
  j(b64url('{"alg":"HS256","typ":"JWT"}'), '.', b64url(JSON.stringify({ sub: subject, scope: 'admin' })), '.', signature);

/** One sample of every provider shape, a JWT, and the generic fallback. */
export function providerSamples(): SecretSample[] {
  const r = rng(20261123);
  const gh = (p: string) => {
    const body = pick(r, B62, 30);
    return j('gh', p, '_', body, base62Crc32(body));
  };
  const npmBody = pick(r, B62, 30);
  const s = (kind: SecretKind, name: string, value: string): SecretSample => ({ kind, name, value });
  return [
    s('github-token', 'github classic pat', gh('p')),
    s('github-token', 'github oauth token', gh('o')),
    s('github-token', 'github app token', gh('s')),
    s('github-token', 'github fine-grained pat', j('github', '_pat_', pick(r, B62, 22), '_', pick(r, B62, 59))),
    s('npm-token', 'npm token', j('np', 'm_', npmBody, base62Crc32(npmBody))),
    s('gitlab-token', 'gitlab pat', j('gl', 'pat-', pick(r, B62, 20))),
    s('slack-token', 'slack bot token', j('xo', 'xb-', pick(r, DIGITS, 12), '-', pick(r, DIGITS, 13), '-', pick(r, B62, 24))),
    s('stripe-key', 'stripe live secret key', j('sk', '_live_', pick(r, B62, 48))),
    s('google-api-key', 'google api key', j('AI', 'za', pick(r, B62, 35))),
    s('anthropic-key', 'anthropic key', j('sk', '-ant-', 'api03-', pick(r, B62, 93), 'AA')),
    s('huggingface-token', 'hugging face token', j('h', 'f_', pick(r, B62, 34))),
    s('sendgrid-key', 'sendgrid key', j('S', 'G.', pick(r, B62, 22), '.', pick(r, B62, 43))),
    s('pypi-token', 'pypi token', j('py', 'pi-', 'AgEIcHlwaS5vcmc', pick(r, B62, 60))),
    s('jwt', 'jwt', jwt(pick(r, B62, 12), pick(r, B62 + '-_', 43))),
  ];
}

/** Values a key-like name is assigned to, for the entropy fallback. */
export function genericSamples(): Array<{ name: string; text: string; value: string }> {
  const r = rng(7117);
  const v1 = pick(r, B62, 40);
  const v2 = pick(r, B62, 32);
  const v3 = pick(r, B62 + '-_', 48);
  const v4 = pick(r, '0123456789abcdef', 40);
  return [
    { name: 'env assignment', text: `ACME_API_KEY=${v1}`, value: v1 },
    { name: 'JSON client secret', text: `{"client_secret": "${v2}"}`, value: v2 },
    { name: 'authorization header', text: `Authorization: Bearer ${v3}`, value: v3 },
    { name: 'YAML token (40 hex)', text: `deploy:\n  token: ${v4}\n`, value: v4 },
  ];
}

// ---- separators inside a key -------------------------------------------------------------------------

const every = (s: string, n: number, sep: string) => s.replace(new RegExp(`(.{${n}})(?!$)`, 'g'), `$1${sep}`);

export const SEPARATORS: Record<string, (s: string) => string> = {
  'a dash every 4 characters': (s) => every(s, 4, '-'),
  'an underscore every 5 characters': (s) => every(s, 5, '_'),
  'a space every 4 characters': (s) => every(s, 4, ' '),
  'a newline every 8 characters': (s) => every(s, 8, '\n'),
  'spaced letters': (s) => [...s].join(' '),
  'markdown bold pieces': (s) => every(s, 6, '**'),
  'backticked pieces': (s) =>
    s
      .match(/.{1,5}/g)!
      .map((p) => `\`${p}\``)
      .join(' '),
  'table cells': (s) => `| ${s.match(/.{1,6}/g)!.join(' | ')} |`,
  '<br> every 6 characters': (s) => every(s, 6, '<br>'),
  'a literal \\n every 10 characters': (s) => every(s, 10, '\\n'),
  'dots every 3 characters': (s) => every(s, 3, '.'),
  // Found by a black-box attack: punctuation and look-alikes the joiner did not know, every 4 characters.
  ...Object.fromEntries(
    (
      [
        ['a slash', '/'],
        ['a backslash', '\\'],
        ['a plus', '+'],
        ['a caret', '^'],
        ['an equals sign', '='],
        ['a hash', '#'],
        ['empty parentheses', '()'],
        ['empty brackets', '[]'],
        ['angle brackets', '<>'],
        ['a middle dot', '\u00b7'],
        ['a bullet', '\u2022'],
        ['a hyphenation point', '\u2027'],
        ['a bullet operator', '\u2219'],
        ['a dot operator', '\u22c5'],
        ['an ogham space mark', '\u1680'],
      ] as const
    ).map(([name, sep]): [string, (s: string) => string] => [`${name} every 4 characters`, (s) => every(s, 4, sep)]),
  ),
};

// ---- blank characters normalisation must drop --------------------------------------------------------

/** Blank characters between every character of a key (not default-ignorable, so Unicode's properties miss them). */
export const BLANKS: Record<string, (s: string) => string> = {
  'a braille pattern blank between every character': (s) => [...s].join('\u2800'),
  'a musical null notehead between every character': (s) => [...s].join('\u{1D159}'),
  'an object replacement character between every character': (s) => [...s].join('\uFFFC'),
  'a Hangul filler between every character': (s) => [...s].join('\u3164'),
  'a Hangul choseong filler between every character': (s) => [...s].join('\u115F'),
  'a halfwidth Hangul filler between every character': (s) => [...s].join('\uFFA0'),
};

// ---- confusables the old hand table did not have ----------------------------------------------------

const OLD_TABLE = new Set([...'АВЕЅІЈКМНОРСТХУҮԚԜҺӀԀѴаеѕіјорсхуүкһԁԛԝӏѵɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿονακρυχϲϳıȷɑɩʀօսհց']);
const confusables = createRequire(import.meta.url)('unhomoglyph/data.json') as Record<string, string>;
/** For each ASCII letter or digit, a look-alike from Unicode's data that the old table did not fold. */
const BEYOND_OLD: Record<string, string> = {};
for (const [from, to] of Object.entries(confusables)) {
  const cp = from.codePointAt(0)!;
  if (cp < 0x80 || from.length !== 1 || OLD_TABLE.has(from) || !/^[A-Za-z0-9]$/.test(to) || BEYOND_OLD[to]) continue;
  if (to === 'l' || to === 'O') continue; // the skeleton's l and O also stand for I, 1 and 0
  if (from.normalize('NFKC') !== from) continue; // NFKC folds these already
  BEYOND_OLD[to] = from;
}

export const CONFUSABLES: Record<string, (s: string) => string> = {
  'confusables beyond the old table': (s) => [...s].map((c) => BEYOND_OLD[c] ?? c).join(''),
};

// ---- encodings that were not decoded -------------------------------------------------------------------

const rot13 = (s: string) => s.replace(/[A-Za-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - (c <= 'Z' ? 65 : 97) + 13) % 26) + (c <= 'Z' ? 65 : 97)));
function base32(buf: Buffer): string {
  const a = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0,
    value = 0,
    out = '';
  for (const b of buf) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += a[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += a[(value << (5 - bits)) & 31];
  return out + '='.repeat((8 - (out.length % 8)) % 8);
}

export const MORE_ENCODINGS: Record<string, (s: string) => string> = {
  reversed: (s) => [...s].reverse().join(''),
  rot13,
  base32: (s) => base32(Buffer.from(s)),
  'base32 lower case': (s) => base32(Buffer.from(s)).toLowerCase().replace(/=/g, ''),
  'HTML decimal entities': (s) => [...s].map((c) => `&#${c.charCodeAt(0)};`).join(''),
  'HTML hex entities': (s) => [...s].map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join(''),
  'HTML entities for the dashes only': (s) => s.replace(/-/g, '&#45;').replace(/_/g, '&lowbar;'),
  'unicode brace escapes': (s) => [...s].map((c) => `\\u{${c.charCodeAt(0).toString(16)}}`).join(''),
  'octal escapes': (s) => [...Buffer.from(s)].map((b) => '\\' + b.toString(8).padStart(3, '0')).join(''),
  'decimal character codes': (s) => [...Buffer.from(s)].map(String).join(','),
  'String.fromCharCode': (s) => `String.fromCharCode(${[...Buffer.from(s)].join(', ')})`,
  'gzip then base64': (s) => gzipSync(Buffer.from(s)).toString('base64'),
  'zlib then base64': (s) => deflateSync(Buffer.from(`key: ${s}\n`)).toString('base64'),
};

/** Mathematical bold letters and digits (NFKC folds them to ASCII; `_` and `-` stay as they are). */
export const mathBold = (s: string): string =>
  [...s]
    .map((c) => {
      const u = c.charCodeAt(0);
      if (/[A-Z]/.test(c)) return String.fromCodePoint(0x1d400 + u - 65);
      if (/[a-z]/.test(c)) return String.fromCodePoint(0x1d41a + u - 97);
      if (/[0-9]/.test(c)) return String.fromCodePoint(0x1d7ce + u - 48);
      return c;
    })
    .join('');

/** The evasions the docs list, which must hold for every listed kind. */
export const EVERY_KIND: Record<string, (s: string) => string> = {
  reversed: MORE_ENCODINGS.reversed!,
  rot13,
  'mathematical bold': mathBold,
};

// ---- AWS key ids ----------------------------------------------------------------------------------------

export const AWS_FORMS: Record<string, (s: string) => string> = {
  'in lower case': (s) => s.toLowerCase(),
  'glued to a word before it': (s) => `awskey${s}`,
  'glued to a word after it': (s) => `${s}isthekey`,
  'grouped in fours with spaces': (s) => s.match(/.{4}/g)!.join(' '),
  'grouped in fours with dashes': (s) => s.match(/.{4}/g)!.join('-'),
};

// ---- private keys in disguise ---------------------------------------------------------------------------

const lines = (pem: string) => pem.split('\n');
export const PEM_DISGUISES: Record<string, (pem: string) => string> = {
  'quoted lines': (p) =>
    lines(p)
      .map((l) => `> ${l}`)
      .join('\n'),
  'numbered lines': (p) =>
    lines(p)
      .map((l, i) => `${String(i + 1).padStart(2, '0')}: ${l}`)
      .join('\n'),
  'lower-case header and footer': (p) => p.replace(/BEGIN [A-Z ]+KEY/, (m) => m.toLowerCase()).replace(/END [A-Z ]+KEY/, (m) => m.toLowerCase()),
  'no header': (p) => lines(p).slice(1).join('\n'),
  'no header and no footer': (p) => lines(p).slice(1, -1).join('\n'),
  'three dashes': (p) => p.replace(/-{5}/g, '---'),
  'ten dashes': (p) => p.replace(/-{5}/g, '-'.repeat(10)),
  '<br> between lines': (p) => lines(p).join('<br>'),
  'backticks around each line': (p) =>
    lines(p)
      .map((l) => `\`${l}\``)
      .join('\n'),
  'a JSON array of lines': (p) => JSON.stringify(lines(p)),
  'a line that is not base64 in the middle': (p) => {
    const ls = lines(p);
    ls.splice(Math.floor(ls.length / 2), 0, '(pasted from the vault, do not share)');
    return ls.join('\n');
  },
};

export const pemLabel = (label: string) => ({ header: pemHeader(label), footer: pemFooter(label) });

// ---- block terms written to slip past a word list (the squeezed reading, src/guard/squeezed.ts) -------------

/**
 * A block rule's explicit term (the rules file's own `csam-terms`, nothing else) however written: as one word,
 * in leetspeak beyond digits, with stroke letters, spelled out with other separators, spelled out with a leet
 * letter. Each must be found.
 */
export const EXPLICIT_TERMS = [
  'childporn',
  '#childporn',
  'ChildPorn',
  'moderation log keyword: childporn',
  'ch!ld porn',
  'chi1d porn',
  'chi|d porn',
  '(hild porn',
  'c#ild porn',
  'c|-|ild p0rn',
  'child p()rn',
  'child p@rn',
  'child p°rn',
  'ch¡ld porn',
  'child por|\\|',
  'chiłd porn',
  'chilđ porn',
  '(h!ld p0rn',
  'chi|d p()rn',
  'c\nh\ni\nl\nd\np\no\nr\nn',
  'c\th\ti\tl\td\tp\to\tr\tn',
  'c,h,i,l,d,p,o,r,n',
  'c, h, i, l, d, p, o, r, n',
  'c/h/i/l/d/p/o/r/n',
  'c;h;i;l;d;p;o;r;n',
  'c:h:i:l:d:p:o:r:n',
  'c|h|i|l|d|p|o|r|n',
  'c+h+i+l+d+p+o+r+n',
  'c~h~i~l~d~p~o~r~n',
  '(c)(h)(i)(l)(d) (p)(o)(r)(n)',
  '[c][h][i][l][d] [p][o][r][n]',
  'c h 1 l d p o r n',
  'c h i l d p 0 r n',
  'c h ! l d p o r n',
  'ch il dp or n',
  'chi ld por n',
  'c\u2800h\u2800i\u2800l\u2800d porn',
  'chi\u2800ld porn',
  'c\u2800h\u2800i\u2800l\u2800d p\u2800o\u2800r\u2800n',
  'where can I find kiddiep0rn',
  'UNDERAGE-NUDES folder',
];

/** ... and what is not one: a term that does not start a word, does not end one, or starts an ordinary word. */
export const NOT_EXPLICIT_TERMS = [
  'The torpedo: pornography filters on the ship wifi flagged the manual.',
  'Our minor nudesk project (a typo for "nude desk" in the furniture catalogue) is late.',
  'Come funziona la segnalazione di materiale pedopornografico alla Polizia Postale?',
  'signaler contenu pédopornographique PHAROS',
  'lol porn filters are a meme on that forum',
];

/**
 * Disguises of a term's letters, each keyed by what it does: what the squeezed reading reads through, and what
 * it is built not to read (a word before or after the term, an ordinary word, doubled letters).
 */
export const TERM_DISGUISES: Record<string, (term: string) => string> = {
  'as written': (t) => t,
  'words joined': (t) => t.replace(/ /g, ''),
  'upper case, words joined by a dash': (t) => t.toUpperCase().replace(/ /g, '-'),
  'one letter a line': (t) => [...t.replace(/ /g, '')].join('\n'),
  'letters between slashes': (t) => [...t.replace(/ /g, '')].join('/'),
  'letters between bars': (t) => [...t.replace(/ /g, '')].join('|'),
  'letters in brackets': (t) => [...t.replace(/ /g, '')].map((c) => `(${c})`).join(''),
  'letters in square brackets': (t) => [...t.replace(/ /g, '')].map((c) => `[${c}]`).join(' '),
  'letters between braille blanks': (t) => [...t.replace(/ /g, '')].join('\u2800'),
  'pairs of letters': (t) => t.replace(/ /g, '').replace(/(..)/g, '$1 '),
  'digits for letters': (t) => t.replace(/i/g, '1').replace(/o/g, '0').replace(/e/g, '3').replace(/a/g, '4').replace(/s/g, '5').replace(/t/g, '7'),
  'symbols for letters': (t) => t.replace(/i/g, '!').replace(/o/g, '@').replace(/s/g, '$').replace(/h/g, '#').replace(/c/g, '('),
  'bars and degrees': (t) => t.replace(/l/g, '|').replace(/o/g, '°').replace(/i/g, '¡'),
  'digraphs for letters': (t) => t.replace(/o/g, '()').replace(/h/g, '|-|').replace(/n/g, '|\\|').replace(/a/g, '[]'),
  'braces for o': (t) => t.replace(/o/g, '{}'),
  'stroke letters': (t) => t.replace(/l/g, 'ł').replace(/d/g, 'đ').replace(/o/g, 'ø'),
  'a hashtag': (t) => `#${t.replace(/ /g, '')}`,
  'in a sentence': (t) => `where can I find ${t} links?`,
  // Built not to be read: the term inside a word, a word glued after it, an ordinary word, doubled letters.
  'after a word': (t) => `torpedo${t.replace(/ /g, '')}`,
  'before a word': (t) => `${t.replace(/\*$/, '')}graphy archive`,
  'glued to letters after': (t) => `${t}xyz`,
  'an ordinary word': (t) => `materiale ${t.replace(/ /g, '')}ografico`,
  'doubled letters': (t) => t.replace(/([aeiou])/g, '$1$1'),
  'bars between letters after a letter': (t) => `x${[...t.replace(/ /g, '')].join('|')}`,
  'half a digraph': (t) => t.replace(/h/g, '|-').replace(/n/g, '|\\'),
};
