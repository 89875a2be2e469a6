/**
 * An attack found in review: reformatting defeated redaction (47 of 61 variants reached the upstream). Each family
 * here - separators inside a key, confusables beyond the old table, encodings that were not decoded, AWS ids
 * in lower case, glued or grouped, private keys in disguise - is held to what a user would notice: nothing
 * of the key reaches the model. Where the whole disguise is one run it is masked exactly (the text around it
 * intact); where the disguise spreads a key over pieces, no ten consecutive characters of the key survive,
 * even with every separator removed. Provider tokens of every shape are masked with their own kind, and a
 * token whose checksum fails is not.
 */
import { expect } from 'chai';
import { AWS_FORMS, BLANKS, CONFUSABLES, EVERY_KIND, MORE_ENCODINGS, PEM_DISGUISES, SEPARATORS, genericSamples, providerSamples } from './helpers/evasions.js';
import { secretSamples, type SecretSample } from './helpers/secrets.js';
import { guardrails, secretFindings, user } from './helpers/guardrails.js';
import { LOOKALIKES, shapeVariants } from './helpers/shapes.js';

const BEFORE = 'config value: ';
const AFTER = ' (rotate it after the demo)';
const mask = (kind: string) => `[REDACTED:${kind}]`;

function redacted(text: string): string {
  return guardrails().redact({ messages: [user(BEFORE + text + AFTER)] }).request.messages[0]!.content!;
}

/** Does any run of ten characters of the key (dashes and underscores aside) survive in `out`, separators removed? */
function leaks(out: string, secret: string): string | null {
  const squeezed = out
    .replace(/\[REDACTED:[a-z-]+\]/g, '#')
    .replace(/<br ?\/?>|\\[nrt]/g, '')
    .replace(/[^A-Za-z0-9+/=]/g, '');
  const core = secret.replace(/[^A-Za-z0-9+/=]/g, '');
  for (let i = 0; i + 10 <= core.length; i++) if (squeezed.includes(core.slice(i, i + 10))) return core.slice(i, i + 10);
  return null;
}

describe('guard: secret evasions', () => {
  const base = secretSamples();
  const keys = ['openai legacy', 'openai project', 'aws AKIA', 'aws ASIA'].map((n) => base.find((s) => s.name === n)!);
  const pems = ['pem rsa (pkcs#1)', 'pem pkcs#8', 'pem ec', 'openssh'].map((n) => base.find((s) => s.name === n)!);
  const providers = providerSamples();

  describe('provider tokens', () => {
    for (const s of providers) {
      it(`masks a ${s.name} as ${s.kind}`, () => {
        expect(redacted(s.value)).to.equal(BEFORE + mask(s.kind) + AFTER);
      });
    }
    it('does not mask a GitHub- or npm-shaped token whose checksum fails', () => {
      for (const s of providers.filter((x) => x.kind === 'npm-token' || /^gh[pos]_/.test(x.value))) {
        const last = s.value.at(-1)!;
        const broken = s.value.slice(0, -1) + (last === 'A' ? 'B' : 'A');
        expect(redacted(broken), s.name).to.equal(BEFORE + broken + AFTER);
      }
    });
    for (const g of genericSamples()) {
      it(`masks a high-entropy value assigned to a key-like name: ${g.name}`, () => {
        const out = redacted(g.text);
        expect(out).not.to.include(g.value);
        expect(out).to.include(mask('generic-secret'));
      });
    }
    it('leaves placeholders, references, UUIDs and hashes assigned to key-like names alone', () => {
      for (const text of [
        'OPENAI_API_KEY=${OPENAI_API_KEY}',
        'api_key: process.env.ACME_API_KEY_FOR_PRODUCTION_USE',
        'token = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"',
        'password: <your password here, at least twenty>',
        'session_token: 123e4567-e89b-12d3-a456-426614174000',
        'secret_name: prod/database/primary-writer-credentials',
      ]) {
        expect(redacted(text), text).to.equal(BEFORE + text + AFTER);
      }
    });
  });

  describe('separators inside a key', () => {
    for (const [family, lace] of Object.entries(SEPARATORS)) {
      const laced = ['github classic pat', 'stripe live secret key', 'github fine-grained pat'];
      for (const s of [...keys, ...providers.filter((p) => laced.includes(p.name))]) {
        // A backslash before `n`, `r` or `t` is a written line break, which takes the letter with it: a key
        // of a fixed length laced so loses a character and is no longer one (documented).
        if (family.startsWith('a backslash') && s.name !== 'stripe live secret key' && laced.includes(s.name)) continue;
        // Dashes and underscores are in these tokens' own alphabet: not joined across (documented).
        if (/^(a dash|an underscore)/.test(family) && s.name === 'github fine-grained pat') continue;
        it(`masks ${s.name} with ${family}`, () => {
          const out = redacted(lace(s.value));
          expect(leaks(out, s.value), out).to.equal(null);
          expect(out.startsWith(BEFORE) && out.endsWith(AFTER), out).to.equal(true);
        });
      }
    }
  });

  describe('laced keys among words that start as a prefix does', () => {
    // `sklearn`, `npmjs`, `ghost`, `xoxo`, `hfLEAwag`: each starts a laced prefix, no key's reading; they are not
    // joined (laced.ts `leads`), and a laced key right after them is.
    const words = 'pip install sklearn npmjs then ghost xoxo hfLEAwag';
    const laced = ['github classic pat', 'stripe live secret key', 'slack bot token', 'npm token'];
    for (const s of [...keys, ...providers.filter((p) => laced.includes(p.name))]) {
      it(`masks ${s.name} laced with spaces after them`, () => {
        const spaced = s.value.match(/.{1,4}/g)!.join(' ');
        const out = redacted(`${words} ${spaced} and ${words}`);
        expect(leaks(out, s.value), out).to.equal(null);
        expect(out, out).to.include(words);
      });
    }
  });

  describe('blank characters between every character', () => {
    for (const [family, f] of Object.entries(BLANKS)) {
      for (const s of [...keys, ...providers]) {
        it(`masks ${s.name} with ${family}`, () => {
          expect(redacted(f(s.value))).to.equal(BEFORE + mask(s.kind) + AFTER);
        });
      }
    }
  });

  describe('confusables', () => {
    for (const [family, f] of Object.entries(CONFUSABLES)) {
      for (const s of [...keys, ...providers.slice(0, 2)]) {
        it(`masks ${s.name} written with ${family}`, () => {
          const evaded = f(s.value);
          expect(evaded).not.to.equal(s.value);
          expect(redacted(evaded)).to.equal(BEFORE + mask(s.kind) + AFTER);
        });
      }
    }
  });

  describe('encodings', () => {
    for (const [encoding, encode] of Object.entries(MORE_ENCODINGS)) {
      for (const s of [...keys, pems[2]!, providers[0]!].filter((x) => encode(x.value) !== x.value)) {
        it(`masks ${s.name} as ${encoding}`, () => {
          const encoded = encode(s.value);
          const out = redacted(encoded);
          expect(out, out.slice(0, 200)).to.equal(BEFORE + mask(s.kind) + AFTER);
        });
      }
    }
  });

  describe('every listed kind under the evasions every kind is promised to survive', () => {
    // Found by a black-box attack: reversed or ROT13 text was only turned when it held an `sk-`, AWS, `ghp_`,
    // Google or Stripe prefix, and a bold digit folded to a letter (its confusable skeleton) before NFKC.
    for (const [evasion, f] of Object.entries(EVERY_KIND)) {
      for (const s of [...keys, ...base.filter((k) => k.kind === 'aws-access-key-id'), ...providers]) {
        it(`masks ${s.name} ${evasion}`, () => {
          expect(redacted(f(s.value))).to.equal(BEFORE + mask(s.kind) + AFTER);
        });
      }
    }
    it('masks an AWS key id whose base32 has no digit', () => {
      // `AKIAPXBZLYQF5VQNGLI5` in base32: a run of capitals only, which was not read as base32.
      expect(redacted('IFFUSQKQLBBFUTCZKFDDKVSRJZDUYSJV')).to.equal(BEFORE + mask('aws-access-key-id') + AFTER);
    });
  });

  describe('AWS key ids', () => {
    for (const [form, f] of Object.entries(AWS_FORMS)) {
      for (const s of keys.filter((k) => k.kind === 'aws-access-key-id')) {
        it(`masks ${s.name} ${form}`, () => {
          const out = redacted(f(s.value));
          expect(leaks(out, s.value), out).to.equal(null);
          expect(out).to.include(mask('aws-access-key-id'));
        });
      }
    }
  });

  describe('keys glued to letters or digits in front', () => {
    // Before, only a separator in front (`_`, `=`) let these be found: `KEYsk-proj-...` reached the model.
    const GLUES: Record<string, string> = {
      'a letter': 'a',
      'a word': 'KEY',
      digits: '20',
      'a digit and a zero-width space': '2\u200b',
      'a circled number (NFKC: 20)': '\u2473',
    };
    const glued = [
      // Project, service-account and admin keys: a legacy `sk-` key glued in front is not looked for (`task-`).
      ...base.filter((s) => ['openai project', 'openai service account', 'openai admin'].includes(s.name)),
      ...providers.filter(
        (p) => ['github-token', 'npm-token', 'slack-token', 'anthropic-key', 'pypi-token'].includes(p.kind) && !p.value.includes('hooks.slack.com'),
      ),
    ];
    for (const s of glued) {
      for (const [what, glue] of Object.entries(GLUES)) {
        it(`masks ${s.name} glued to ${what}, and only the key`, () => {
          expect(redacted(glue + s.value)).to.equal(BEFORE + glue + mask(s.kind) + AFTER);
        });
      }
    }
    it('masks a glued key split across two messages in both halves', () => {
      const k = base.find((x) => x.name === 'openai project')!.value;
      const cut = 20;
      const out = guardrails()
        .redact({ messages: [user(`use KEY${k.slice(0, cut)}`), user(k.slice(cut))] })
        .request.messages.map((m) => m.content);
      expect(out).to.deep.equal([`use KEY${mask('openai-key')}`, mask('openai-key')]);
    });
    it('does not read a key as glued to the end of the text before it (JSON keys and values are separate texts)', () => {
      // Read joined, `key` + the key + `pem` looks like a glued key running into the next text; it is not.
      const k = base.find((x) => x.name === 'openai project')!.value;
      const out = guardrails()
        .redact({ messages: [user('the key'), user(k), user('pem')] })
        .request.messages.map((m) => m.content);
      expect(out).to.deep.equal(['the key', mask('openai-key'), 'pem']);
    });
    it('leaves identifiers after a word ending in a key prefix alone, and a glued token whose checksum fails', () => {
      const github = providers.find((p) => p.name === 'github classic pat')!.value;
      const brokenGithub = github.slice(0, -1) + (github.endsWith('A') ? 'B' : 'A');
      for (const text of [
        'task-proj-management-dashboard-2024',
        // A body that sk-proj- alone would be masked for, but that does not read as random: words and a counter.
        'ask-proj-AbcdefghijKLMNOP1234',
        'mask-proj-config-AbcdefghijKLMNOPqrst1',
        'risk-admin-escalation-path-for-tier2-incidents',
        `KEY${brokenGithub}`,
      ]) {
        expect(redacted(text), text).to.equal(BEFORE + text + AFTER);
      }
    });
  });

  describe('private keys in disguise', () => {
    const bodyLines = (s: SecretSample) => s.value.split('\n').filter((l) => /^[A-Za-z0-9+/=]{16,}$/.test(l));
    for (const [disguise, f] of Object.entries(PEM_DISGUISES)) {
      for (const s of pems) {
        it(`masks ${s.name} with ${disguise}`, () => {
          const out = redacted(f(s.value));
          expect(out).to.include(mask('private-key'));
          for (const line of bodyLines(s)) expect(out.includes(line.slice(0, 16)), `a body line survived: ${out.slice(0, 300)}`).to.equal(false);
          expect(secretFindings(guardrails().scan({ messages: [user(out)] }))).to.deep.equal([]);
        });
      }
    }
  });
});

describe('guard: credential shapes and families of the third pass', () => {
  const variants = shapeVariants();
  const families = new Map<string, number>();
  for (const v of variants) families.set(v.family, (families.get(v.family) ?? 0) + 1);

  it('holds at least three variants of every family', () => {
    for (const [family, n] of families) expect(n, family).to.be.greaterThanOrEqual(3);
  });

  for (const v of variants) {
    it(`masks ${v.family}: ${v.name}`, () => {
      const out = redacted(v.text);
      expect(out, out.slice(0, 400)).to.include(mask(v.kind));
      expect(out.includes(v.secret), out.slice(0, 400)).to.equal(false);
      expect(leaks(out, v.secret), out.slice(0, 400)).to.equal(null);
      expect(out.startsWith(BEFORE) && out.endsWith(AFTER), out).to.equal(true);
    });
  }

  it('leaves placeholders, references and public values that look like these shapes alone', () => {
    for (const text of LOOKALIKES) expect(redacted(text), text).to.equal(BEFORE + text + AFTER);
  });

  it('masks only the password of a database URL: user, host and database stay readable', () => {
    const v = variants.find((x) => x.family === 'database url' && x.name === 'postgres')!;
    expect(redacted(v.text)).to.equal(BEFORE + v.text.replace(v.secret, mask('url-password')) + AFTER);
  });
});

describe('guard: masks cover exactly the secret', () => {
  const stripe = shapeVariants().find((v) => v.kind === 'stripe-key')!.secret;
  const mid = stripe.slice(0, 32);
  for (const [name, text, expected] of [
    ['a whole key, prose after it', `use ${stripe} and then deploy`, `use ${mask('stripe-key')} and then deploy`],
    ['a 32-character key, prose after it', `use ${mid} and then deploy it`, `use ${mask('stripe-key')} and then deploy it`],
    ['a key, a full stop, a sentence', `Use ${stripe}. Then deploy it to prod.`, `Use ${mask('stripe-key')}. Then deploy it to prod.`],
    ['a key split in two, prose after it', `use ${stripe.slice(0, 20)} ${stripe.slice(20)} and then deploy`, `use ${mask('stripe-key')} and then deploy`],
  ] as const) {
    it(`masks ${name}`, () => {
      expect(guardrails().redact({ messages: [user(text)] }).request.messages[0]!.content).to.equal(expected);
    });
  }
});

describe('guard: the forms a blind attacker set found', () => {
  // Fake bodies, random; the checksummed and fixed-length shapes are whole keys of their kind.
  const gitlab = 'glpat-TXf8cuNb2yTh0rGkFqYr';
  const hf = 'hf_PXYZ6aBPIpARRZNxdh0mrBibfpSe7Mg4lA';
  const pat = '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';
  const slack = 'xoxb-683756509706-287958212972-U1wrrMzzvNJFPVdeDUm4LCPw';
  const google = 'AIza7fn8rW3fAoSO_7cf3DG3rcI5puyto0B0bEL';
  const lace = (s: string, n: number, sep: string) => s.match(new RegExp(`.{1,${n}}`, 'g'))!.join(sep);
  for (const [name, text, secret, kind] of [
    ['a Google key laced with dashes, an underscore in its body', lace(google, 7, '-'), google, 'google-api-key'],
    ['a GitLab token laced with underscores, one inside its prefix', lace(gitlab, 4, '_'), gitlab, 'gitlab-token'],
    ['a Hugging Face token laced with dashes', lace(hf, 5, '-'), hf, 'huggingface-token'],
    ['a fine-grained GitHub token laced with dashes', lace(pat, 8, '-'), pat, 'github-token'],
    ['a Slack token laced with underscores', lace(slack, 5, '_'), slack, 'slack-token'],
  ] as const) {
    it(`masks ${name}`, () => {
      const out = redacted(text);
      expect(out).to.equal(BEFORE + mask(kind) + AFTER);
      expect(leaks(out, secret)).to.equal(null);
    });
  }

  it('masks the pieces of a key in C adjacent literals of a #define continued over lines', () => {
    const key =
      'sk-proj-Q2Cr9YcvmBkrSyigsD8EDz5GuCWBeSDJr0XArERhvxZPHFYX0GpBEFL3IlwY6nBET3BlbkFJRXldniegT1R67GDsQU3AgohYPwzmwadkqYm4yQduISpZ5O2I04LgypuY2lFFrUsy';
    const text = `#define OPENAI_KEY "${key.slice(0, 50)}" \\\n                   "${key.slice(50, 100)}" \\\n                   "${key.slice(100)}"`;
    const out = redacted(text);
    expect(out).to.equal(`${BEFORE}#define OPENAI_KEY "${mask('openai-key')}"${AFTER}`);
  });

  it('masks an ODBC password in braces, and leaves a format field in braces alone', () => {
    const odbc = (pwd: string) => `DRIVER={ODBC Driver 18 for SQL Server};SERVER=sql02;DATABASE=fin;UID=fin_ro;PWD=${pwd};`;
    expect(redacted(odbc('{6jIerkEz2m92}'))).to.equal(BEFORE + odbc(`{${mask('connection-string')}}`) + AFTER);
    expect(redacted(odbc('{a;b}}c9Xq}'))).to.equal(BEFORE + odbc(`{${mask('connection-string')}}`) + AFTER);
    for (const field of ['{password}', '{db_pass}', '{0}', '{self.pwd}', '{{ vault_pwd }}'])
      expect(redacted(odbc(field))).to.equal(BEFORE + odbc(field) + AFTER);
  });

  it("masks a Kubernetes Secret's base64 password, unless it is the base64 of a placeholder", () => {
    const secret = (b64: string) => `data:\n  password: ${b64}\n  username: YWRtaW4=\n`;
    const real = Buffer.from('s3cr3t-Pwd-2024!').toString('base64');
    expect(redacted(secret(real))).to.not.include(real);
    for (const placeholder of ['changeme', 'password', 'CHANGE_ME', '<password>']) {
      const b64 = Buffer.from(placeholder).toString('base64');
      expect(redacted(secret(b64)), placeholder).to.equal(BEFORE + secret(b64) + AFTER);
    }
  });

  it('leaves lists of AWS prefixes alone: a detection rule, documentation, either case', () => {
    for (const text of [
      "regex = '''(A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}'''",
      '(A3T[A-Z0-9]|AKIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ASIA)[A-Z0-9]{16}',
      'The prefixes are AKIA, ASIA, ABIA, ACCA, AGPA and AIDA.',
      'akia|asia|abia|acca|agpa',
    ])
      expect(redacted(text), text).to.equal(BEFORE + text + AFTER);
  });
});

describe('guard: the forms a second blind attacker set found', () => {
  const b64url = (s: string) => Buffer.from(s).toString('base64url');
  const jwt = `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url('{"sub":"520867179","iat":1790647687,"scope":"read write"}')}.9CHlo3E9HHbvCfqeqSVuUZiX0Sm3OVZh26TEH-ubDhE`;
  const wrap = (s: string, n: number, eol: string) => s.match(new RegExp(`.{1,${n}}`, 'g'))!.join(eol);

  it('masks a value found as a secret where it is assigned at its other exact occurrences in the request too', () => {
    const value = 'TrsfsGGmQAYnhH8Eevs3mWOwZy61ZaADUFUKV2eeJiJt1Fb0nrmZw9nv0FoS7eEA';
    const sql = `INSERT INTO integrations (name, api_key) VALUES ('crm','${value}');\n-- api_key: ${value}`;
    // The question first: a secret at the end of one message may take the next message's first word.
    const { request, masked } = guardrails().redact({ messages: [user(`is ${value} still valid?`), user(sql)] });
    expect(JSON.stringify(request)).to.not.include(value);
    expect(masked).to.equal(3);
    expect(request.messages[0]!.content).to.equal(`is ${mask('generic-secret')} still valid?`);
  });

  it('leaves a short or word-like value found as a password where it appears again unassigned', () => {
    const text = 'db_password: Xy7pass99\nthe old one was Xy7pass99 too';
    expect(redacted(text)).to.equal(`${BEFORE}db_password: ${mask('password')}\nthe old one was Xy7pass99 too${AFTER}`);
  });

  for (const [column, eol] of [
    [16, '\n'],
    [30, '\n'],
    [64, '\r\n'],
    [76, '\n'],
  ] as const) {
    it(`masks a JWT wrapped at ${column} columns${eol === '\r\n' ? ' with CRLF' : ''}, and not the line after it`, () => {
      const text = `${wrap(jwt, column, eol)}${eol}Thanks`;
      expect(redacted(text)).to.equal(`${BEFORE}${mask('jwt')}${eol}Thanks${AFTER}`);
    });
  }

  it('leaves three dotted parts wrapped at a column whose first does not decode to a JOSE header', () => {
    const text = wrap(`${b64url('{"sub":"520867179","iat":1790647687}')}.${b64url('{"scope":"read"}')}.9CHlo3E9HHbvCfqeqSVuUZiX0Sm3OVZh26TE`, 30, '\n');
    expect(redacted(text)).to.equal(BEFORE + text + AFTER);
  });

  for (const [name, dot] of [
    ['ideographic full stops', '\u3002'],
    ['halfwidth ideographic full stops', '\uff61'],
  ] as const) {
    it(`masks a SendGrid key whose dots are ${name}`, () => {
      const key = `SG${dot}aPdRcRO5VxDr1uTUS43nFZ${dot}_AgTWjZJQtFjyo1Q7xM1INcRNXD2Wz0K2yJkolcrhM6`;
      expect(redacted(key)).to.equal(BEFORE + mask('sendgrid-key') + AFTER);
    });
  }
});
