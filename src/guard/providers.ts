/**
 * Provider credential shapes beyond `sk-` keys, AWS key ids and private keys: the token formats that
 * providers publish and that gitleaks, trufflehog and GitHub secret scanning look for, each anchored on its
 * literal prefix and checked for what the provider guarantees - GitHub and npm tokens end in a CRC32
 * checksum of their random part (base62), so a string of the right shape whose checksum fails (an example in
 * documentation, `ghp_xxxx...`) is not a token.
 *
 * Every pattern is a literal prefix then bounded character classes, with a lookbehind so it starts at a
 * word boundary: linear time, a match is never retried from inside itself. A `must` string lets the scan
 * skip the pattern on texts that do not hold its prefix at all (one native `includes`).
 *
 * A shape marked `glued` is also found glued to letters or digits in front (`KEYghp_...`, `20xoxb-...`):
 * its prefix is long or odd enough, and its body checked enough (a checksum, numeric ids then a long secret
 * part, a fixed length), that a word ending in its first letters does not make one. The others (`sk_live_`
 * after `disk`, `hf_`, `AIza`, `SG.`) keep the boundary. The search without the lookbehind stays linear: the
 * work at each offset is bounded by the pattern's bounded repetitions.
 */
import { crc32 } from 'node:zlib';
import type { SecretKind } from './types.js';

export interface ProviderShape {
  kind: SecretKind;
  /** A literal every match contains (the texts without it are skipped). */
  must: string;
  re: RegExp;
  /** The prefixes laced.ts joins from for this shape (absent: not looked for with separators inside). */
  laced?: readonly string[];
  /** Extra check on the matched text (a checksum, a mixed alphabet). */
  accept?: (match: string) => boolean;
  /** Also found glued to letters or digits in front (see above); the hit starts at the prefix. */
  glued?: true;
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** GitHub's and npm's token checksum: the last 6 characters are the base62 CRC32 of the 30 before them. */
export function base62Crc32Ok(token: string, prefixLength: number): boolean {
  const body = token.slice(prefixLength, token.length - 6);
  const sum = token.slice(-6);
  let value = 0;
  for (const c of sum) {
    const d = BASE62.indexOf(c);
    if (d < 0) return false;
    value = value * 62 + d;
  }
  return value === crc32(Buffer.from(body, 'latin1')) >>> 0;
}

/** The base62 CRC32 checksum a token body of GitHub's format ends with (for tests and examples). */
export function base62Crc32(body: string): string {
  let value = crc32(Buffer.from(body, 'latin1')) >>> 0;
  let out = '';
  for (let i = 0; i < 6; i++) {
    out = BASE62[value % 62]! + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** Upper case, lower case and digits all present: random tokens have them, words and ids rarely do. */
const mixed = (s: string): boolean => /[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s);

export const PROVIDER_SHAPES: readonly ProviderShape[] = [
  // GitHub: ghp_ (classic PAT), gho_ (OAuth), ghu_ (user-to-server), ghs_ (server-to-server), ghr_ (refresh).
  {
    kind: 'github-token',
    must: 'gh',
    laced: ['gh'],
    re: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/g,
    accept: (m) => base62Crc32Ok(m, 4),
    glued: true,
  },
  // GitHub fine-grained PAT: github_pat_ + 22 + _ + 59 (no published checksum; the length and prefix are specific).
  {
    kind: 'github-token',
    must: 'github_pat_',
    laced: ['github_pat_'],
    re: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9_])/g,
    glued: true,
  },
  // npm: npm_ + 36, GitHub's format and checksum.
  {
    kind: 'npm-token',
    must: 'npm_',
    laced: ['npm_'],
    re: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/g,
    accept: (m) => base62Crc32Ok(m, 4),
    glued: true,
  },
  // GitLab personal, project and group access tokens.
  {
    kind: 'gitlab-token',
    must: 'glpat-',
    laced: ['glpat-'],
    re: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,64}(?![A-Za-z0-9_-])/g,
    accept: (m) => /[0-9]/.test(m.slice(6)) && /[A-Za-z]/.test(m.slice(6)),
  },
  // Slack bot, user, app-level, refresh and configuration tokens: xox? + numeric team/user ids + a secret part.
  { kind: 'slack-token', must: 'xox', laced: ['xox'], re: /(?<![A-Za-z0-9])xox[abposre]-[0-9]{6,16}-[0-9A-Za-z-]{16,200}(?![A-Za-z0-9-])/g, glued: true },
  {
    kind: 'slack-token',
    must: 'hooks.slack.com/',
    re: /hooks\.slack\.com\/(?:services|workflows|triggers)\/T[A-Z0-9]{6,12}\/[A-Z0-9]{6,14}\/[A-Za-z0-9]{20,40}/g,
  },
  // Stripe secret and restricted keys, live and test.
  {
    kind: 'stripe-key',
    must: '_live_',
    laced: ['sk', 'rk_'],
    re: /(?<![A-Za-z0-9_])(?:sk|rk)_live_[A-Za-z0-9]{20,247}(?![A-Za-z0-9_])/g,
    accept: (m) => mixed(m.slice(8)),
  },
  {
    kind: 'stripe-key',
    must: '_test_',
    laced: ['sk', 'rk_'],
    re: /(?<![A-Za-z0-9_])(?:sk|rk)_test_[A-Za-z0-9]{20,247}(?![A-Za-z0-9_])/g,
    accept: (m) => mixed(m.slice(8)),
  },
  // Google API keys.
  { kind: 'google-api-key', must: 'AIza', laced: ['AIza'], re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  // Anthropic API and admin keys.
  { kind: 'anthropic-key', must: 'sk-ant-', laced: ['sk'], re: /(?<![A-Za-z0-9])sk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_-]{32,200}/g, glued: true },
  // Hugging Face user access tokens.
  {
    kind: 'huggingface-token',
    must: 'hf_',
    laced: ['hf_'],
    re: /(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,40}(?![A-Za-z0-9_])/g,
    accept: (m) => /[A-Z]/.test(m) && /[a-z]/.test(m.slice(3)),
  },
  // SendGrid API keys: SG. + 22 + . + 43.
  { kind: 'sendgrid-key', must: 'SG.', re: /(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g },
  // PyPI API tokens: a macaroon whose first bytes encode "pypi.org".
  { kind: 'pypi-token', must: 'pypi-', re: /(?<![A-Za-z0-9])pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}/g, glued: true },
];

/** The pattern a scan runs for `shape`: for a `glued` shape, without the lookbehind (made once per shape). */
const SCAN_RES = new Map<ProviderShape, { re: RegExp }>(
  PROVIDER_SHAPES.map((p) => {
    if (!p.glued) return [p, { re: p.re }];
    const behind = /^\(\?<!(\[[^\]]*\])\)/.exec(p.re.source);
    if (!behind) throw new Error(`provider shape ${p.kind}: a glued shape starts with a lookbehind`);
    return [p, { re: new RegExp(p.re.source.slice(behind[0].length), p.re.flags) }];
  }),
);
export const scanRe = (shape: ProviderShape): { re: RegExp } => SCAN_RES.get(shape)!;
