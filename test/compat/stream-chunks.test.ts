/**
 * The emulated stream on the wire, chunk by chunk, against OpenAI's documented `chat.completion.chunk`
 * (the reference's ChatCompletionChunk: id, object, created, model, optional system_fingerprint and
 * service_tier, choices[index, delta{role, content, refusal, tool_calls[index, id, type, function]},
 * finish_reason, logprobs], usage). The schema below is that object with no other field allowed, except the
 * gateway's own three on the finish chunk; its field lists are checked against the openai SDK's typings, so
 * it cannot drift from OpenAI's. Then OpenAI's usage rule, for both variants: without
 * `stream_options.include_usage` no chunk has a `usage` key; with it every chunk but the last has
 * `usage: null` and the last, with `choices: []`, has the usage, which equals the plain call's.
 * Live gateway, recording upstream, real Redis.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { createParser } from 'eventsource-parser';
import { startWorld, type World } from '../helpers/world.js';
import { REPO } from '../helpers/gateway.js';

const nullable = (s: object) => ({ anyOf: [s, { type: 'null' }] });
const int = { type: 'integer', minimum: 0 };

const usage = {
  type: 'object',
  additionalProperties: false,
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: {
    prompt_tokens: int,
    completion_tokens: int,
    total_tokens: int,
    prompt_tokens_details: {
      type: 'object',
      additionalProperties: false,
      properties: { audio_tokens: int, cache_write_tokens: int, cached_tokens: int },
    },
    completion_tokens_details: {
      type: 'object',
      additionalProperties: false,
      properties: { accepted_prediction_tokens: int, audio_tokens: int, reasoning_tokens: int, rejected_prediction_tokens: int },
    },
  },
};

const toolCall = {
  type: 'object',
  additionalProperties: false,
  required: ['index'],
  properties: {
    index: int,
    id: { type: 'string' },
    type: { const: 'function' },
    function: { type: 'object', additionalProperties: false, properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
  },
};

const delta = {
  type: 'object',
  additionalProperties: false,
  properties: {
    role: { enum: ['developer', 'system', 'user', 'assistant', 'tool'] },
    content: nullable({ type: 'string' }),
    refusal: nullable({ type: 'string' }),
    tool_calls: { type: 'array', items: toolCall },
    function_call: { type: 'object', additionalProperties: false, properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
  },
};

const choice = {
  type: 'object',
  additionalProperties: false,
  required: ['index', 'delta', 'finish_reason'],
  properties: {
    index: int,
    delta,
    finish_reason: nullable({ enum: ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'] }),
    logprobs: nullable({
      type: 'object',
      required: ['content', 'refusal'],
      properties: { content: nullable({ type: 'array' }), refusal: nullable({ type: 'array' }) },
    }),
  },
};

/** The gateway's own fields, on the finish chunk only (the service's interface puts them there). */
const GATEWAY = ['billing', 'receiptId', 'chargedMicroUSD'];

const chunk = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'object', 'created', 'model', 'choices'],
  properties: {
    id: { type: 'string', pattern: '^chatcmpl-' },
    object: { const: 'chat.completion.chunk' },
    created: int,
    model: { type: 'string', minLength: 1 },
    choices: { type: 'array', items: choice },
    system_fingerprint: { type: 'string' },
    service_tier: nullable({ enum: ['auto', 'default', 'flex', 'scale', 'priority'] }),
    moderation: nullable({ type: 'object' }),
    usage: nullable(usage),
    billing: { enum: ['free', 'paid'] },
    receiptId: { type: 'string', pattern: '^rcpt_' },
    chargedMicroUSD: int,
  },
};

const validate = new Ajv({ allErrors: true, strict: true }).compile(chunk);

/** The fields of one interface in the openai SDK's typings (the documented object, as the SDK ships it). */
function sdkFields(file: string, start: string, after = ''): string[] {
  const dts = readFileSync(join(REPO, 'node_modules/openai/resources', file), 'utf8');
  const at = dts.indexOf(start, dts.indexOf(after));
  expect(at, start).to.be.greaterThan(-1);
  const body = dts.slice(at, dts.indexOf('\n' + start.match(/^\s*/)![0] + '}', at));
  return [...body.matchAll(/^\s*([a-z_]+)\??:/gm)].map((m) => m[1]!).filter((f, i, all) => all.indexOf(f) === i);
}

type Event = Record<string, any> | '[DONE]';

describe("stream chunks on the wire, against OpenAI's chat.completion.chunk (live gateway, recording upstream, real redis)", () => {
  let w: World;
  let p: { id: string; token: string };

  before(async () => {
    w = await startWorld();
    p = await w.gw.principal();
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  let n = 0;
  const base = () => ({ model: 'shared-general-a', max_tokens: 256, messages: [{ role: 'user', content: `stream prompt ${n++}` }] });
  const events = async (body: Record<string, unknown>): Promise<{ raw: string; out: Event[] }> => {
    const res = await w.gw.chat(p.token, body);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/event-stream');
    const out: Event[] = [];
    const parser = createParser({ onEvent: (e) => out.push(e.data === '[DONE]' ? '[DONE]' : JSON.parse(e.data)) });
    parser.feed(res.body as string);
    return { raw: res.body as string, out };
  };

  /** Every chunk against the schema, and the rules that span chunks, for one variant. */
  function check(out: Event[], includeUsage: boolean) {
    expect(out[out.length - 1]).to.equal('[DONE]');
    expect(out.filter((e) => e === '[DONE]')).to.have.length(1);
    const chunks = out.slice(0, -1) as Array<Record<string, any>>;
    expect(chunks).to.have.length(includeUsage ? 3 : 2);
    for (const [i, c] of chunks.entries()) {
      expect(validate(c), `chunk ${i}: ${JSON.stringify(validate.errors)}`).to.equal(true);
      // One id, created, model and fingerprint for the whole stream, as OpenAI sends them.
      for (const k of ['id', 'created', 'model', 'system_fingerprint']) expect(c[k], `chunk ${i} ${k}`).to.equal(chunks[0]![k]);
    }
    const [content, finish, last] = chunks as [Record<string, any>, Record<string, any>, Record<string, any> | undefined];
    // Content chunk: the role once, the content, no finish reason yet, none of the gateway's fields.
    expect(content.choices).to.have.length(1);
    expect(content.choices[0]).to.deep.include({ index: 0, logprobs: null, finish_reason: null });
    expect(content.choices[0].delta.role).to.equal('assistant');
    for (const k of GATEWAY) expect(content).not.to.have.property(k);
    // Finish chunk: an empty delta, the finish reason, and the gateway's fields.
    expect(finish.choices).to.deep.equal([{ index: 0, delta: {}, logprobs: null, finish_reason: finish.choices[0].finish_reason }]);
    expect(finish.choices[0].finish_reason).to.be.a('string');
    expect(Object.keys(finish)).to.include.members(GATEWAY);
    // OpenAI's usage rule.
    if (!includeUsage) {
      for (const c of chunks) expect(c).not.to.have.property('usage');
    } else {
      expect(content.usage).to.equal(null);
      expect(finish.usage).to.equal(null);
      expect(last!.choices).to.deep.equal([]);
      expect(last!.usage).to.be.an('object');
      for (const k of GATEWAY) expect(last).not.to.have.property(k);
      expect(chunks.filter((c) => c['usage'] != null)).to.have.length(1);
    }
    return chunks;
  }

  it("the schema holds exactly the fields of the openai SDK's ChatCompletionChunk, choice, delta, tool call and usage", () => {
    const own = (s: { properties: object }) => Object.keys(s.properties).sort();
    const file = 'chat/completions/completions.d.ts';
    expect(own(chunk).filter((k) => !GATEWAY.includes(k))).to.deep.equal(sdkFields(file, 'export interface ChatCompletionChunk {').sort());
    const ns = 'export declare namespace ChatCompletionChunk {';
    expect(own(choice)).to.deep.equal(sdkFields(file, '    interface Choice {', ns).sort());
    expect(own(delta)).to.deep.equal(sdkFields(file, '        interface Delta {', ns).sort());
    expect(own(toolCall)).to.deep.equal(sdkFields(file, '            interface ToolCall {', ns).sort());
    expect(own(usage)).to.deep.equal(sdkFields('completions.d.ts', 'export interface CompletionUsage {').sort());
  });

  it('without include_usage: every chunk is a valid chunk and none has a usage key', async () => {
    const { out } = await events({ ...base(), stream: true });
    const [content, finish] = check(out, false);
    expect(content!.choices[0].delta.content).to.match(/^recorded answer/);
    expect(finish!).to.include({ billing: 'free', chargedMicroUSD: 0 });
    expect(finish!.choices[0].finish_reason).to.equal('stop');
  });

  it("with include_usage: usage null on all chunks but the last, which has empty choices and the upstream's usage", async () => {
    await w.upstream.behave({
      mode: 'echo',
      systemFingerprint: 'fp_wire',
      reasoningTokens: 4,
      usage: { prompt_tokens: 13, completion_tokens: 9, cached_tokens: 2 },
    });
    const body = { ...base(), stream: true, stream_options: { include_usage: true } };
    const { out } = await events(body);
    const chunks = check(out, true);
    expect(chunks[0]!['system_fingerprint']).to.equal('fp_wire');
    const plain = await w.gw.chat(p.token, { ...base(), messages: body.messages }); // the same job, not streamed
    expect(chunks[2]!['usage']).to.deep.equal(plain.body.usage);
    expect(chunks[2]!['usage']).to.deep.equal({
      prompt_tokens: 13,
      completion_tokens: 9,
      total_tokens: 22,
      prompt_tokens_details: { cached_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 4 },
    });
    // Summed across chunks, as pydantic-ai, LangChain and openai-go do it: each token once.
    const summed = chunks.reduce((s, c) => s + (c['usage']?.total_tokens ?? 0), 0);
    expect(summed).to.equal(22);
  });

  it('a tool-call answer, both variants: indexed tool calls in the delta, finish_reason tool_calls', async () => {
    await w.upstream.behave({ mode: 'tool-call', toolCallId: 'call_wire' });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    for (const includeUsage of [false, true]) {
      const { out } = await events({ ...base(), tools, stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) });
      const [content, finish] = check(out, includeUsage);
      expect(content!.choices[0].delta.tool_calls).to.deep.equal([
        { index: 0, id: 'call_wire', type: 'function', function: { name: 'lookup', arguments: '{"verdict":"safe"}' } },
      ]);
      expect(finish!.choices[0].finish_reason).to.equal('tool_calls');
    }
  });

  it('a refusal, both variants: the refusal in the delta, every chunk still valid', async () => {
    await w.upstream.behave({ mode: 'echo', refusal: 'I cannot help with that.' });
    for (const includeUsage of [false, true]) {
      const { out } = await events({ ...base(), stream: true, ...(includeUsage ? { stream_options: { include_usage: true } } : {}) });
      const [content] = check(out, includeUsage);
      expect(content!.choices[0].delta.refusal).to.equal('I cannot help with that.');
    }
  });

  it('a re-attached stream (the identical request again) is the same bytes, in the same shape', async () => {
    const body = { ...base(), stream: true, stream_options: { include_usage: true } };
    const first = await events(body);
    const again = await events(body);
    expect(await w.upstream.requests()).to.have.length(1);
    expect(again.raw).to.equal(first.raw);
    check(again.out, true);
  });
});
