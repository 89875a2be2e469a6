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
});
