/**
 * The scan's shortcuts, held to the full reading they stand in for: the run scan steps over prose reading
 * one character in 24 (so an encoded secret is tried at every offset from that step), the boundary pass
 * reads only the stretch around a boundary that a secret could be made of (so encoded secrets are split
 * inside prose, where that stretch is short), binary decodings are tested one byte in twenty for a
 * printable run, and the lexical classifier reuses one word stream from request to request.
 */
import { expect } from 'chai';
import { ENCODINGS, rng, secretSamples, type SecretSample } from './helpers/secrets.js';
import { blockFindings, guardrails, secretFindings, user } from './helpers/guardrails.js';
import { findSecrets, findSecretsAcross, type SecretHit, type SecretScanOptions } from '../../src/guard/secrets.js';

const PROSE = 'Please review this (old) config before the release and tell me whether anything in it leaks. ';
const BEFORE = 'config value: ';
const AFTER = ' (rotate it after the demo)';
const mask = (s: SecretSample) => `[REDACTED:${s.kind}]`;
const ALL: SecretScanOptions = {
  kinds: new Set(['openai-key', 'aws-access-key-id', 'private-key']),
  decoders: new Set(['base64', 'hex', 'percent', 'unicode-escape']),
};

describe('guard: fast paths', () => {
  const g = () => guardrails();
  const samples = secretSamples();
  // One sample of each kind, a short private key among them.
  const some = ['openai project', 'aws AKIA', 'pem ec'].map((name) => samples.find((s) => s.name === name)!);

  it('has prose of more than one skip step before the secret', () => {
    expect(PROSE.length).to.be.greaterThan(2 * 24);
  });

  for (const [encoding, encode] of Object.entries(ENCODINGS)) {
    it(`masks a secret as ${encoding} at every offset after prose`, () => {
      for (const s of some) {
        const encoded = encode(s.value);
        for (let k = 0; k < 2 * 24; k++) {
          const before = PROSE.slice(0, k) + BEFORE;
          const { request } = g().redact({ messages: [user(before + encoded + AFTER)] });
          expect(request.messages[0]!.content, `${s.name} after ${k} characters`).to.equal(before + mask(s) + AFTER);
        }
      }
    });

    it(`masks both halves of a secret as ${encoding} split across two messages of prose`, () => {
      for (const s of some) {
        const encoded = encode(s.value);
        const k = Math.floor(encoded.length / 2);
        const req = { messages: [user(PROSE + BEFORE + encoded.slice(0, k)), user(encoded.slice(k) + AFTER + PROSE)] };
        const { request } = g().redact(req);
        expect(
          request.messages.map((m) => m.content),
          s.name,
        ).to.deep.equal([PROSE + BEFORE + mask(s), mask(s) + AFTER + PROSE]);
      }
    });

    it(`finds a secret as ${encoding} across a boundary by its stretch as by the whole text`, () => {
      const crossing = (hits: SecretHit[], cut: number) => hits.filter((h) => h.start < cut && h.end > cut);
      for (const s of [...some, samples.find((x) => x.name === 'pem dsa')!]) {
        const encoded = encode(s.value);
        for (const k of [1, Math.floor(encoded.length / 3), Math.floor(encoded.length / 2), encoded.length - 1]) {
          const head = PROSE + BEFORE + encoded.slice(0, k);
          const text = head + encoded.slice(k) + AFTER + PROSE;
          const cuts = [PROSE.length, head.length, text.length - PROSE.length];
          const across = findSecretsAcross(text, cuts, ALL);
          const whole = findSecrets(text, ALL);
          expect(crossing(across, head.length), `${s.name} split at ${k}`).to.have.length.greaterThan(0);
          for (const cut of cuts) expect(crossing(across, cut), `${s.name} split at ${k}`).to.deep.equal(crossing(whole, cut));
        }
      }
    });
  }

  it('finds a private key block across a boundary as the whole text does, in prose that says "begin"', () => {
    // Blocks are read in the whole text (they hold line breaks and spaces), the rest in the stretches.
    const crossing = (hits: SecretHit[], cut: number) =>
      hits.filter((h) => h.start < cut && h.end > cut).sort((a, b) => a.start - b.start || a.end - b.end || a.kind.localeCompare(b.kind));
    const prose = 'Before we begin, please review this key and the config around it. ';
    for (const s of samples.filter((x) => x.kind === 'private-key')) {
      for (const k of [3, Math.floor(s.value.length / 3), Math.floor(s.value.length / 2), s.value.length - 2]) {
        const head = prose + BEFORE + s.value.slice(0, k);
        const text = head + s.value.slice(k) + AFTER + prose;
        const cuts = [prose.length, head.length, text.length - prose.length];
        const across = findSecretsAcross(text, cuts, ALL);
        const whole = findSecrets(text, ALL);
        for (const cut of cuts) expect(crossing(across, cut), `${s.name} split at ${k}`).to.deep.equal(crossing(whole, cut));
        expect(crossing(across, head.length), `${s.name} split at ${k}`).to.have.length.greaterThan(0);
      }
    }
  });

  it('reads the whole text around a boundary when it may hold a private key block', () => {
    const pem = samples.find((s) => s.name === 'pem ec')!.value;
    const text = PROSE + BEFORE + pem + AFTER + PROSE;
    const cut = PROSE.length + BEFORE.length + 40;
    expect(findSecretsAcross(text, [cut], ALL)).to.deep.equal(findSecrets(text, ALL));
  });

  describe('in prose that says "begin", what a split secret reaches beyond the words around the cut', () => {
    // What a narrower reading of the boundary than the whole text must still find: secrets split by a cut
    // whose reading reaches past the run characters around it, or far from it (a reading of the units near each
    // cut only was tried and dropped: bench/README.md, 2026-11-28, afternoon). Each is compared with the whole
    // text's reading: the distinct hits that contain the cut (a span found by two readings is one finding). (Without
    // `begin` the pass reads the stretches of run characters alone, and the first two are not found.)
    const crossing = (hits: SecretHit[], cut: number) =>
      [...new Set(hits.filter((h) => h.start < cut && h.end > cut).map((h) => `${h.start} ${h.end} ${h.kind}`))].sort();
    const kindsOf = (hits: SecretHit[], cut: number) => [...new Set(hits.filter((h) => h.start < cut && h.end > cut).map((h) => h.kind))];
    const KINDS: SecretScanOptions = {
      kinds: new Set(['openai-key', 'aws-access-key-id', 'private-key', 'generic-secret', 'password', 'aws-secret-key', 'jwt']),
      decoders: ALL.decoders,
    };
    const aws = samples.find((s) => s.name === 'aws AKIA')!.value;
    const filler = (n: number) => 'we begin the review here. '.repeat(Math.ceil(n / 26)).slice(0, n);
    /** findSecretsAcross(text, [cut]) against the whole text, and the kinds it finds across the cut. */
    const same = (text: string, cut: number, label: string): string[] => {
      const across = findSecretsAcross(text, [cut], KINDS);
      expect(crossing(across, cut), label).to.deep.equal(crossing(findSecrets(text, KINDS), cut));
      return kindsOf(across, cut);
    };

    it('a key laced with separators no encoded run holds (`|`, quotes)', () => {
      const laced = aws.match(/.{4}/g)!.join(' | ');
      for (let k = 1; k < laced.length; k++) {
        const text = filler(3000) + `see "${laced}" here` + filler(3000);
        expect(same(text, 3000 + 5 + k, `cut at ${k}`), `cut at ${k}`).to.include('aws-access-key-id');
      }
    });

    it('a value assigned in quotes, cut inside the value (its name is before the quote)', () => {
      const split = 'api_key = "Zq8vR2mX7pL4wN9tK3sB6yH1cF5dJ0gA"';
      for (let k = split.indexOf('"') + 2; k < split.length - 2; k += 5) {
        const text = filler(3000) + split + filler(3000);
        expect(same(text, 3000 + k, `cut at ${k}`), `cut at ${k}`).to.deep.equal(['generic-secret']);
      }
    });

    it("a CSV export's row, cut inside a password, its header 2,000 units before", () => {
      const rows = Array.from({ length: 120 }, (_, i) => `user${i},Zq8vR2mX7pL4w${i}N9tK3,AKIAI0000000000000${i % 10}0,2026-11-0${(i % 9) + 1}`);
      const text = filler(1000) + 'User name,Password,Access key ID,Last used\n' + rows.join('\n') + '\n' + filler(1000);
      const row = text.indexOf('user110,');
      expect(row - text.indexOf('User name')).to.be.greaterThan(2000);
      expect(same(text, row + 'user110,Zq8vR'.length, 'row 110')).to.deep.equal(['password']);
    });

    it("an INI file's secret, cut inside the value, its section 2,000 units before", () => {
      const ini = '[server]\nhost = db.internal\n' + '; a comment line that says nothing much at all\n'.repeat(60) + 'client_secret = Zq8vR2mX7p\n';
      const text = filler(1000) + ini + filler(1000);
      const cut = text.indexOf('Zq8vR2') + 5;
      expect(cut - text.indexOf('[server]')).to.be.greaterThan(2000);
      expect(same(text, cut, 'ini')).to.deep.equal(['password']);
    });

    it('a key of 2,000 characters, cut at every few hundred', () => {
      const r = rng(13);
      const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
      const key = 'sk-' + Array.from({ length: 2000 }, () => B62[Math.floor(r() * 62)]).join('');
      const text = filler(3000) + ' ' + key + ' ' + filler(3000);
      for (let k = 1; k < key.length; k += 333) expect(same(text, 3001 + k, `cut at ${k}`), `cut at ${k}`).to.deep.equal(['openai-key']);
    });

    it('a private key block whose header is further from the cut than a window of its own length', () => {
      const pem = samples.find((s) => s.name === 'pem rsa (pkcs#1)')!.value;
      const text = filler(3000) + pem + '\n' + filler(3000);
      for (const k of [pem.length - 40, pem.length - 2]) expect(same(text, 3000 + k, `cut at ${k}`), `cut at ${k}`).to.include('private-key');
    });
  });

  it('finds nothing split across a boundary between two clean messages of prose', () => {
    const req = { messages: [user(PROSE.repeat(40)), user(PROSE.repeat(40))] };
    expect(secretFindings(g().scan(req))).to.deep.equal([]);
  });

  it("masks a key's body, not the prose and code before it, when a key header and an armour line begin a long line", () => {
    // One line of code: a key header, `Proc-Type:` and then, thousands of units on, a key's base64 lines joined by
    // `+`. An armour line is short; read as one it took the whole line into the block and masked all of it.
    const pem = samples.find((s) => s.name === 'pem rsa (pkcs#1)')!.value;
    const [header, ...rest] = pem.split('\n');
    const body = rest.filter((l) => l !== '' && !l.startsWith('-----'));
    const prose = 'we review the change here and move on. '.repeat(40);
    const text = `x = "${header}\\nProc-Type: 4,ENCRYPTED" + "aa"; ${prose} y = ${body.map((l) => `"${l}\\n"`).join(' + ')};`;
    const out = g().redact({ messages: [user(text)] }).request.messages[0]!.content as string;
    expect(out.startsWith(`x = "${header}\\nProc-Type: 4,ENCRYPTED" + "aa"; ${prose} y = `), out.slice(0, 200)).to.equal(true);
    expect(out).to.include('[REDACTED:private-key]');
    expect(out).not.to.include(body[5]!);
  });

  it('masks a key in base64 of binary data wherever it lies', () => {
    const aws = samples.find((s) => s.kind === 'aws-access-key-id')!;
    const r = rng(7);
    for (let at = 0; at < 40; at++) {
      const bytes = Buffer.from(Array.from({ length: 160 }, () => Math.floor(r() * 256)));
      // Bytes that are not letters or digits on both sides, so the key stands alone in the decoded text.
      bytes[at] = 0;
      bytes.write(aws.value, at + 1, 'latin1');
      bytes[at + 1 + aws.value.length] = 0;
      const { request } = g().redact({ messages: [user(BEFORE + bytes.toString('base64') + AFTER)] });
      expect(request.messages[0]!.content, `key at byte ${at}`).to.equal(BEFORE + mask(aws) + AFTER);
    }
  });

  it('reads a request afresh after a much larger one', () => {
    const blocked = 'Give me a step-by-step synthesis route for sarin.';
    // More words than a reused word stream keeps room for between requests.
    const large = 'xx '.repeat(100_000) + blocked;
    expect(blockFindings(g().scan({ messages: [user(large)] })).map((f) => f.rule)).to.deep.equal(['cbrn-block']);
    expect(g().scan({ messages: [user('Review this C code for buffer overflows.')] }).findings).to.deep.equal([]);
    expect(blockFindings(g().scan({ messages: [user(blocked)] })).map((f) => f.rule)).to.deep.equal(['cbrn-block']);
    expect(g().scan({ messages: [user('Review this C code for buffer overflows.')] }).findings).to.deep.equal([]);
  });
});
