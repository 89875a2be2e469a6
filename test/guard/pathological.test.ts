/**
 * Inputs built to hurt each pattern, at the largest size the firewall admits (524,288 characters): long
 * runs of the characters a detector keys on, repeated prefixes and headers, long encoded runs, long
 * invisible runs. Each must finish (the suite's timeout is generous on purpose; bench/guard-scan.ts
 * measures the time) and give a sane answer. A detector with super-linear behaviour would not finish here.
 */
import { expect } from 'chai';
import type { ChatLike } from '../../src/guard/index.js';
import { guardrails, secretFindings, user } from './helpers/guardrails.js';
import { SK, pemHeader, rng, secretSamples } from './helpers/secrets.js';

const MAX = 524_288;
const fill = (unit: string, length = MAX) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const r = rng(99);
const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));

describe('guard: pathological inputs', function () {
  this.timeout(120_000);
  const g = () => guardrails();

  const cases: Array<[string, () => string, number]> = [
    // [name, input, secret-hygiene findings expected]
    ['sk- repeated', () => fill(SK), 0],
    ['sk- and a key-alphabet run to the end', () => SK + fill('a1B2c3D4e5F6g7H8', MAX - 3), 1],
    ['sk- and a dashed identifier run to the end', () => SK + fill('a1B2-', MAX - 3), 0],
    ['A run', () => fill('A'), 0],
    ['AKIA repeated', () => fill('AKIA'), 0],
    ['AKIA and uppercase to the end', () => fill('AKIAQ'), 0],
    ['-----BEGIN repeated', () => fill('-----BEGIN '), 0],
    ['private-key headers repeated, no body', () => fill(pemHeader('RSA PRIVATE KEY') + '\n'), 0],
    ['a header then blank lines', () => pemHeader('PRIVATE KEY') + fill('\n', MAX - 40), 0],
    ['a header then one endless base64 line', () => pemHeader('PRIVATE KEY') + '\n' + fill('QUFB', MAX - 40), 1],
    ['footer starts repeated', () => fill('-----END '), 0],
    ['base64 run of random bytes', () => randomBytes((MAX * 3) / 4).toString('base64'), 0],
    [
      'base64 wrapped at 76 columns',
      () =>
        randomBytes((MAX * 3) / 4)
          .toString('base64')
          .replace(/.{76}/g, '$&\n')
          .slice(0, MAX),
      0,
    ],
    ['base64 run of text', () => Buffer.from(fill('the quick brown fox ', (MAX * 3) / 4)).toString('base64'), 0],
    ['hex run', () => randomBytes(MAX / 2).toString('hex'), 0],
    ['hex byte list', () => fill('de ad be ef '), 0],
    ['percent escapes', () => fill('%41'), 0],
    ['backslash-x escapes', () => fill('\\x41'), 0],
    ['unicode escapes', () => fill('\\u0041'), 0],
    ['backslashes', () => fill('\\'), 0],
    ['zero-width run', () => fill('\u200b'), 0],
    ['zero-width between letters', () => fill('a\u200b'), 0],
    ['soft hyphens between letters', () => fill('s\u00adk'), 0],
    ['fullwidth text', () => fill('ｓｋ－ｐｒｏｊ　'), 0],
    ['combining marks', () => fill('a\u0301\u0302\u0303'), 0],
    ['lone surrogates', () => fill('\ud800x\udc00'), 0],
    ['single letters', () => fill('s a r i n '), 0],
    ['one long word', () => fill('abcdefghij'), 0],
    ['newlines', () => fill('\n'), 0],
    // The credential shapes without a prefix, and the joins.
    ['eyJ repeated', () => fill('eyJ'), 0],
    // The next header reads as the signature: one token's shape, at the start.
    ['a JWT header and payload, no signature, repeated', () => fill('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.'), 1],
    ['scheme://user: repeated', () => fill('postgres://u:'), 0],
    ['a URL whose password is a run of @', () => 'postgres://u:' + fill('@', MAX - 20), 0],
    ['AccountKey= repeated', () => fill('AccountKey='), 0],
    ['Password=;Server= repeated', () => fill('Password=x;Server=y;'), 0],
    ['a CSV header, then rows of commas', () => 'User name,Password,Access key ID,Secret access key\n' + fill(',,,\n', MAX - 60), 0],
    ['an INI section, then password lines with placeholders', () => '[default]\n' + fill('password = ${PW}\n', MAX - 20), 0],
    ['40-character base64 words after "aws"', () => 'aws ' + fill('abcdefghijABCDEFGHIJabcdefghijABCDEFGHIJ ', MAX - 4), 0],
    ['quote plus quote repeated', () => fill('"abc" + '), 0],
    ['empty interpolations repeated', () => fill('abc${""}'), 0],
    ['backslash-newline repeated', () => fill('abc\\\n'), 0],
    ['octal escapes of one digit', () => fill('\\1'), 0],
    ['digits and AKIA', () => fill('0123456789AKIA'), 0],
    ['dash punctuation', () => fill('sk\u2e3a'), 0],
  ];

  for (const [name, build, expected] of cases) {
    it(`finishes on ${name}`, () => {
      const req = { messages: [user(build())] };
      const scan = g().scan(req);
      const { request } = g().redact(req);
      expect(secretFindings(scan)).to.have.length(expected);
      expect(request.messages).to.have.length(1);
      expect(g().maskOutput(req.messages[0]!.content!).text.length).to.be.greaterThan(0);
    });
  }

  it('finishes on 256 messages each holding a key split across the boundary to the next', () => {
    const key = secretSamples()[1]!.value;
    const half = Math.floor(key.length / 2);
    const messages: ChatLike['messages'] = [];
    for (let i = 0; i < 256; i++) messages.push(user(`${i === 0 ? '' : key.slice(half)} filler ${fill('x', 1500)} ${key.slice(0, half)}`));
    const { request, masked } = g().redact({ messages });
    // Both halves at every boundary, and the last message's unfinished half (a key shape of its own).
    expect(masked).to.equal(2 * 255 + 1);
    for (const m of request.messages) expect(m.content).not.to.include(key.slice(0, 24));
  });

  it('finishes on 256 messages of base64 joined end to end', () => {
    const messages = Array.from({ length: 256 }, () => user(randomBytes(1536).toString('base64')));
    expect(secretFindings(g().scan({ messages }))).to.deep.equal([]);
  });

  it('finishes on nested encodings (base64 of base64 of percent escapes)', () => {
    const inner = fill('%41', 60_000);
    const text = Buffer.from(Buffer.from(inner).toString('base64')).toString('base64');
    expect(secretFindings(g().scan({ messages: [user(text)] }))).to.deep.equal([]);
  });
});
