/**
 * Reading a JSON body decodes the bytes once (src/stages/read-body.ts); the text must be what raw-body's own
 * UTF-8 decoding gave before: the byte-order mark dropped, a character split across chunks whole, invalid
 * bytes replaced, and the same answers for bad JSON, a body over the limit and a wrong content type.
 */
import { expect } from 'chai';
import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { readJson } from '../../src/stages/read-body.js';
import { GatewayError } from '../../src/errors.js';

function request(chunks: Buffer[], contentType = 'application/json'): Context {
  const req = new PassThrough();
  const headers: Record<string, string> = { 'content-type': contentType };
  setImmediate(() => {
    for (const c of chunks) req.write(c);
    req.end();
  });
  return { req, get: (name: string) => headers[name.toLowerCase()] ?? '' } as unknown as Context;
}

/** The text as raw-body decoded it before (iconv-lite's UTF-8 decoder), the reference. */
async function decodedBefore(chunks: Buffer[]): Promise<string> {
  const req = new PassThrough();
  setImmediate(() => {
    for (const c of chunks) req.write(c);
    req.end();
  });
  return getRawBody(req, { encoding: 'utf8' });
}

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await p };
  } catch (err) {
    return { code: (err as GatewayError).code };
  }
}

const bom = Buffer.from([0xef, 0xbb, 0xbf]);
const text = Buffer.from('{"messages":[{"role":"user","content":"naïve 日本語 😀 \\u00e9 \\ud800"}]}');
const cases: Record<string, Buffer[]> = {
  'plain UTF-8': [text],
  'a byte-order mark first': [bom, text],
  'a byte-order mark split across chunks': [bom.subarray(0, 1), Buffer.concat([bom.subarray(1), text])],
  'a byte-order mark inside a string': [Buffer.from('{"a":"'), bom, Buffer.from('"}')],
  'every multi-byte character split across chunks': Array.from(text, (b) => Buffer.from([b])),
  'invalid UTF-8 bytes in a string': [Buffer.from('{"a":"'), Buffer.from([0xff, 0xc3, 0x28, 0xe2, 0x82]), Buffer.from('"}')],
  'a truncated character at the end': [Buffer.from('{"a":"x"}'), Buffer.from([0xe2, 0x82])],
  'not JSON': [Buffer.from('{"model": ')],
  empty: [],
};

describe('reading a JSON body', () => {
  for (const [name, chunks] of Object.entries(cases)) {
    it(`${name}: the same value (or error) as decoding with raw-body's UTF-8 decoder`, async () => {
      const expected = await outcome(
        decodedBefore(chunks).then((raw) => {
          try {
            return JSON.parse(raw) as unknown;
          } catch {
            throw new GatewayError('invalid-json');
          }
        }),
      );
      expect(await outcome(readJson(request(chunks), 1 << 20))).to.deep.equal(expected);
    });
  }

  it('refuses a body over the limit 413 and another content type 415', async () => {
    expect(await outcome(readJson(request([text]), 10))).to.deep.equal({ code: 'payload-too-large' });
    expect(await outcome(readJson(request([text], 'text/plain'), 1 << 20))).to.deep.equal({ code: 'unsupported-media-type' });
  });
});
