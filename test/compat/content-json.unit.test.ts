/**
 * A message's content is serialised once per call and shared by the job id and the upstream body
 * (src/compat/content-json.ts). Neither may change for it: the upstream gets the bytes of JSON.stringify of
 * the body it got before, and a job id stays the id the same request had before (clients re-attach by it),
 * for contents with unicode, escapes, control characters and lone surrogates, short and long, and when a
 * message's content is replaced after it was serialised (a redaction).
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { jobIdFor, type JobKey } from '../../src/jobs/job.js';
import { upstreamBody, upstreamPayload } from '../../src/compat/forwarded.js';
import { normaliseMessages, type ClientMessage } from '../../src/compat/messages.js';
import { reviewText } from '../../bench/harness/bodies.js';
import { parseJson } from '../../src/http/read-json.js';
import { rng as seeded } from '../../scripts/rng.js';

/** jobIdFor as it was before the content was shared (commit a69e509), the reference for the ids. */
function jobIdBefore(principalId: string, key: JobKey): string {
  const canonical = (v: unknown) => (v === undefined ? 'null' : (canonicalize(v) ?? 'null'));
  const hash = createHash('sha256').update(JSON.stringify([principalId, key.model, key.task, key.scopeId, key.max_tokens]));
  for (const m of key.messages) {
    hash.update(`\n${JSON.stringify([m.role, m.content ?? null, m.name ?? null, m.tool_call_id ?? null])}${canonical(m.tool_calls)}`);
    if (typeof m.refusal === 'string') hash.update(`\nrefusal ${JSON.stringify(m.refusal)}`);
  }
  hash.update(`\n${canonical(key.tools)}\n${canonical(key.tool_choice)}`);
  if (key.seed !== undefined && key.seed !== null) hash.update(`\nseed ${key.seed}`);
  const h = hash.digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** What undici sends for a payload (it encodes a string body as UTF-8 itself), against what it sent before. */
function expectWireOf(body: Record<string, unknown>): void {
  const payload = upstreamPayload(body);
  const sent = typeof payload === 'string' ? Buffer.from(payload) : payload;
  expect(sent.toString('latin1')).to.equal(Buffer.from(JSON.stringify(body)).toString('latin1'));
}

const tricky = 'naïve café 日本語 😀 "quoted" back\\slash \n\t\r\b\f \u0000\u001f\u007f\u2028\u2029 lone \ud800 and \udfff </script>';
// canonicalize (RFC 8785) refuses lone surrogates, so the free-form JSON (tools) carries none.
const wellFormed = tricky.replace(/[\ud800-\udfff]/g, '?');
const long = `${reviewText(100_000)}${tricky}`;

const conversations: Record<string, ClientMessage[]> = {
  'short text': [{ role: 'user', content: 'hello' }],
  'escapes and unicode, short': [
    { role: 'system', content: tricky },
    { role: 'user', content: tricky, name: 'ann' },
  ],
  '100 KB of review text': [
    { role: 'system', content: 'You review code.' },
    { role: 'user', content: long },
  ],
  'developer turn and text parts, long': [
    { role: 'developer', content: long },
    {
      role: 'user',
      content: [
        { type: 'text', text: long },
        { type: 'text', text: tricky },
      ],
    },
  ],
  'tool calls, refusal and tool results, long': [
    { role: 'user', content: long },
    {
      role: 'assistant',
      content: null,
      refusal: tricky,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"é\\u00e9","n":1.50,"big":1e21}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: long },
    { role: 'assistant', content: '' },
  ],
};

const tools = [
  {
    type: 'function',
    function: { name: 'lookup', description: wellFormed, parameters: { type: 'object', properties: { n: { type: 'number', maximum: 1e21 } } } },
  },
];

function keyOf(messages: JobKey['messages'], extra: Partial<JobKey> = {}): JobKey {
  return { model: 'shared-general-a', task: 'code-review', scopeId: null, max_tokens: 256, messages, tools, tool_choice: 'auto', seed: 7, ...extra };
}

describe('content serialised once for the job id and the upstream body', () => {
  for (const [name, sent] of Object.entries(conversations)) {
    it(`${name}: the job id is the one it was, computed first or again`, () => {
      const messages = normaliseMessages(sent);
      const before = jobIdBefore('p1', keyOf(structuredClone(messages)));
      expect(jobIdFor('p1', keyOf(messages))).to.equal(before);
      expect(jobIdFor('p1', keyOf(messages))).to.equal(before);
      expect(jobIdFor('p1', keyOf(messages, { tools: undefined, tool_choice: undefined, seed: undefined }))).to.equal(
        jobIdBefore('p1', keyOf(structuredClone(messages), { tools: undefined, tool_choice: undefined, seed: undefined })),
      );
    });

    it(`${name}: the upstream gets the bytes of JSON.stringify of its body, before and after the job id`, () => {
      const messages = normaliseMessages(sent);
      const fresh = upstreamBody({ messages, max_tokens: 256, tools, tool_choice: 'auto', parallel_tool_calls: false }, 'upstream-model');
      expectWireOf(fresh);
      jobIdFor('p1', keyOf(messages));
      const after = upstreamBody({ messages, max_tokens: 256 }, 'upstream-model');
      expectWireOf(after);
    });
  }

  it('a content replaced after it was serialised (a redaction) is sent and hashed as it is now', () => {
    const messages = normaliseMessages([{ role: 'user', content: long }]);
    const id = jobIdFor('p1', keyOf(messages));
    const masked = `${long.slice(0, 5000)}[REDACTED:openai-key]${long.slice(5021)}`;
    messages[0]!.content = masked;
    expect(jobIdFor('p1', keyOf(messages)))
      .to.equal(jobIdBefore('p1', keyOf(structuredClone(messages))))
      .and.not.equal(id);
    const body = upstreamBody({ messages, max_tokens: 256 }, 'upstream-model');
    expectWireOf(body);
    expect(upstreamPayload(body).toString()).to.include('[REDACTED:openai-key]');
  });

  it('leaves out undefined fields and keeps key order, as JSON.stringify does', () => {
    const body = {
      model: 'm',
      tools: undefined,
      messages: [{ role: 'user', name: undefined, content: long }, { content: 'x', role: 'user' }, null],
      max_tokens: 1,
      stream: false,
    };
    expectWireOf(body);
    expectWireOf({ messages: [{ content: long }], model: 'm' });
  });

  /**
   * A large body's parse keeps each long content's JSON text, used as the content's JSON when it is what
   * JSON.stringify writes. Bodies written as clients write them: escapes JSON.stringify never writes (`\u`,
   * `\/`), an escaped backslash before a `u`, raw and escaped non-ASCII, duplicate keys (the last counts),
   * invalid UTF-8, a byte-order mark: the job id and the upstream's bytes are those of the parsed request.
   */
  describe('from the body as the client wrote it', () => {
    /** The job id and wire bytes of a request parsed from `text`, against the reference on a clone of it. */
    function expectAsReference(bytes: Buffer): void {
      const body = parseJson(bytes) as { messages: ClientMessage[] };
      const messages = normaliseMessages(body.messages);
      const reference = structuredClone(messages);
      expect(jobIdFor('p1', keyOf(messages))).to.equal(jobIdBefore('p1', keyOf(reference)));
      expectWireOf(upstreamBody({ messages, max_tokens: 256 }, 'upstream-model'));
      expect(Buffer.from(JSON.stringify(upstreamBody({ messages, max_tokens: 256 }, 'upstream-model')))).to.deep.equal(
        Buffer.from(JSON.stringify(upstreamBody({ messages: reference, max_tokens: 256 }, 'upstream-model'))),
      );
    }
    const wrap = (contentJsonText: string, extra = '') =>
      Buffer.from(
        `{"model":"shared-general-a","messages":[{"role":"system","content":"You review code."},{"role":"user",${extra}"content":${contentJsonText}}]}`,
      );
    const pad = JSON.stringify(long).slice(1, -1);

    const written: Record<string, string> = {
      'as JSON.stringify writes it': JSON.stringify(long),
      'with a \\u escape of an ASCII letter': `"\\u0041${pad}"`,
      'with \\/': `"a\\/b${pad}"`,
      'with an escaped backslash before a u': `"\\\\u0041 \\\\/ ${pad}"`,
      'with escaped non-ASCII and a surrogate pair': `"\\u00e9\\ud83d\\ude00${pad}"`,
      'with a lone surrogate escaped in capitals': `"\\uD800${pad}"`,
      'with raw non-ASCII': `"é日本😀${pad}"`,
      'with every short escape': `"\\"\\\\\\b\\f\\n\\r\\t${pad}"`,
    };
    for (const [name, text] of Object.entries(written)) {
      it(`a long content ${name}`, () => expectAsReference(wrap(text)));
    }

    it('duplicate content keys: the last one, as JSON.parse keeps it', () => {
      const first = JSON.stringify(`first ${long}`);
      const last = JSON.stringify(`last ${long}`);
      const bytes = wrap(last, `"content":${first},`);
      const body = parseJson(bytes) as { messages: ClientMessage[] };
      expect(body.messages[1]!.content).to.equal(`last ${long}`);
      expectAsReference(bytes);
      const wire = upstreamPayload(upstreamBody({ messages: normaliseMessages(body.messages), max_tokens: 1 }, 'm')).toString();
      expect(wire).to.include('last ').and.not.include('first ');
    });

    it('invalid UTF-8 and a byte-order mark: the content as decoded, not as the bytes were', () => {
      const bad = Buffer.concat([
        Buffer.from(`{"model":"m","messages":[{"role":"user","content":"`),
        Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80]),
        Buffer.from(`${pad}"}]}`),
      ]);
      expectAsReference(bad);
      expectAsReference(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), wrap(JSON.stringify(long))]));
    });

    it('a large body of many values (parsed plainly) or deep ones: the same value, the same id and bytes', () => {
      const values = Array.from({ length: 300 }, (_, i) => ({ n: i, s: 'x' }));
      const many = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `\u0041${long}` }], tools: values }));
      expect(parseJson(many)).to.deep.equal(JSON.parse(many.toString()));
      expectAsReference(many);
      const dense = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: long }], v: Array.from({ length: 20_000 }, () => 0) }));
      expect(parseJson(dense)).to.deep.equal(JSON.parse(dense.toString()));
      expectAsReference(dense);
      // Within the bound of commas and brackets, more values than the reviver is given: parsed again plainly.
      const tools = Array.from({ length: 100 }, (_, i) => ({ type: 'function', function: { name: `f${i}`, description: 'y'.repeat(200) } }));
      const within = Buffer.from(JSON.stringify({ model: 'm', messages: [{ role: 'user', content: long }], tools }));
      expect(parseJson(within)).to.deep.equal(JSON.parse(within.toString()));
      expectAsReference(within);
      const deep = `{"model":"m","messages":[{"role":"user","content":${JSON.stringify(long + 'y'.repeat(400_000))}}],"v":${'['.repeat(6000)}${']'.repeat(6000)}}`;
      let level = (parseJson(Buffer.from(deep)) as { v: unknown }).v;
      let depth = 0;
      while (Array.isArray(level) && level.length === 1) [level, depth] = [level[0], depth + 1];
      expect([level, depth]).to.deep.equal([[], 5999]);
    });

    it('the parse is JSON.parse: the same value for large bodies of every JSON shape, deep ones included', () => {
      const next = seeded(0x5eed);
      const strings = ['', 'a', '"', '\\', '\n', 'é', '😀', '\ud800', 'content', '__proto__', long.slice(0, 1500)];
      const value = (depth: number): unknown => {
        const r = next();
        if (depth > 4 || r < 0.3) return strings[Math.floor(next() * strings.length)];
        if (r < 0.4) return Math.floor(next() * 1e6) / 100;
        if (r < 0.45) return null;
        if (r < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
        const o: Record<string, unknown> = {};
        for (let i = Math.floor(next() * 5); i > 0; i--) o[strings[Math.floor(next() * strings.length)]!] = value(depth + 1);
        return o;
      };
      for (let i = 0; i < 200; i++) {
        const text = JSON.stringify({ pad: long.slice(0, 9000), v: value(0) });
        expect(parseJson(Buffer.from(text))).to.deep.equal(JSON.parse(text));
      }
      const deep = `{"pad":${JSON.stringify(long.slice(0, 9000))},"v":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
      // The reviver's walk overflows the stack at this depth; the body is still read (validation refuses it later).
      let level = (parseJson(Buffer.from(deep)) as { v: unknown }).v;
      let depth = 0;
      while (Array.isArray(level) && level.length === 1) [level, depth] = [level[0], depth + 1];
      expect(level).to.deep.equal([]);
      expect(depth).to.equal(19_999);
    });
  });
});
