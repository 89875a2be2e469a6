/**
 * The parameter table (rules/chat-parameters.yaml), field by field, against a live gateway, the recording
 * upstream and a real Redis: every field of OpenAI's request is in the table; forwarded fields reach the
 * upstream, dropped ones do not and change nothing, honoured ones act, refused values answer their own code
 * with `param` and `type` where OpenAI's clients read them. Then messages as clients send them, and the
 * answer's fields and stream chunks as clients parse them.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { startWorld, type World } from '../helpers/world.js';
import { REPO } from '../helpers/gateway.js';
import { chatParameterTable } from '../../src/compat/parameters.js';

const table = chatParameterTable();

/** A value each field accepts (as clients typically send it). */
const ACCEPTED: Record<string, unknown> = {
  temperature: 0.2,
  top_p: 0.9,
  presence_penalty: 0.1,
  frequency_penalty: 0.1,
  logit_bias: { '50256': -100 },
  stop: ['\n\n'],
  reasoning_effort: 'low',
  verbosity: 'low',
  service_tier: 'auto',
  user: 'user-1',
  safety_identifier: 'hash-1',
  prompt_cache_key: 'k',
  prompt_cache_retention: '24h',
  prompt_cache_options: {},
  metadata: { run: 'a' },
  store: true,
  moderation: null,
  prediction: { type: 'content', content: 'int main' },
  n: 1,
  logprobs: false,
  top_logprobs: 0,
  response_format: { type: 'text' },
  modalities: ['text'],
  audio: null,
  stream_options: { include_usage: true },
  seed: 42,
  stream: true,
  task: 'remediation',
  max_tokens: 300,
  max_completion_tokens: 300,
  parallel_tool_calls: false,
  tool_choice: 'auto',
  tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
  model: 'shared-general-a',
  messages: [{ role: 'user', content: 'hello' }],
};

/** A value each limited field refuses, and the code it answers. */
const REFUSED: Record<string, [unknown, string]> = {
  n: [2, 'multiple-choices-not-supported'],
  logprobs: [true, 'logprobs-not-supported'],
  top_logprobs: [3, 'logprobs-not-supported'],
  response_format: [{ type: 'json_schema', json_schema: { name: 'x', schema: {} } }, 'response-format-not-supported'],
  modalities: [['text', 'audio'], 'audio-not-supported'],
  audio: [{ voice: 'alloy', format: 'mp3' }, 'audio-not-supported'],
  functions: [[{ name: 'f', parameters: {} }], 'legacy-functions-not-supported'],
  function_call: ['auto', 'legacy-functions-not-supported'],
  web_search_options: [{}, 'web-search-not-supported'],
  stream_options: ['yes', 'invalid-request'],
  seed: ['forty-two', 'invalid-request'],
};

describe('the parameter table, field by field (live gateway, recording upstream, real redis)', () => {
  let w: World;
  let p: { id: string; token: string };

  before(async () => {
    w = await startWorld();
    p = await w.gw.principal();
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  let n = 0;
  /** A fresh prompt each call, so no two calls share a job. */
  const base = () => ({ model: 'shared-general-a', max_tokens: 256, messages: [{ role: 'user', content: `prompt ${n++}` }] });
  const chat = (body: Record<string, unknown>) => w.gw.chat(p.token, body);
  const sent = async () => {
    const reqs = await w.upstream.requests();
    expect(reqs).to.have.length(1);
    return reqs[0]!.body;
  };

  it("lists every field of the openai SDK's ChatCompletionCreateParams, and nothing twice", () => {
    const dts = readFileSync(join(REPO, 'node_modules/openai/resources/chat/completions/completions.d.ts'), 'utf8');
    const start = dts.indexOf('export interface ChatCompletionCreateParamsBase');
    const body = dts.slice(start, dts.indexOf('\n}', start));
    const fields = [...body.matchAll(/^ {4}([a-z_]+)\??:/gm)].map((m) => m[1]!);
    expect(fields.length).to.be.greaterThan(30);
    const names = table.parameters.map((r) => r.name);
    expect(new Set(names).size).to.equal(names.length);
    expect(names).to.include.members(fields);
    // The only field not in OpenAI's request is the gateway's own, and it says so.
    expect(table.parameters.filter((r) => !fields.includes(r.name)).map((r) => [r.name, r.gateway])).to.deep.equal([['task', true]]);
  });

  for (const row of table.parameters) {
    if (row.treatment === 'dropped') {
      it(`drops ${row.name}: accepted, not forwarded`, async () => {
        expect(ACCEPTED, `a sample value for ${row.name}`).to.have.property(row.name);
        const res = await chat({ ...base(), [row.name]: ACCEPTED[row.name] });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        expect(await sent()).not.to.have.property(row.name);
      });
    }
    if (row.treatment === 'forwarded') {
      it(`forwards ${row.name}`, async () => {
        expect(ACCEPTED, `a sample value for ${row.name}`).to.have.property(row.name);
        const body: Record<string, unknown> = { ...base(), [row.name]: ACCEPTED[row.name] };
        if (row.name === 'max_completion_tokens') delete body['max_tokens'];
        if (row.name === 'tool_choice' || row.name === 'parallel_tool_calls') body['tools'] = ACCEPTED['tools'];
        const res = await chat(body);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const up = await sent();
        if (row.name === 'max_completion_tokens') expect(up['max_tokens']).to.equal(300);
        else if (row.name === 'model') expect(up['model']).to.equal('shared-general-a');
        else if (row.name === 'messages') expect(up['messages']).to.deep.equal([{ role: 'user', content: (body['messages'] as any)[0].content }]);
        else expect(up[row.name]).to.deep.equal(ACCEPTED[row.name]);
      });
    }
    if (row.treatment === 'honoured') {
      it(`honours ${row.name} without forwarding it`, async () => {
        expect(ACCEPTED, `a sample value for ${row.name}`).to.have.property(row.name);
        const res = await chat({ ...base(), [row.name]: ACCEPTED[row.name] });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const up = await sent();
        if (row.name === 'stream') {
          // Emulated: the client gets events, the upstream was asked without streaming.
          expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
          expect(up['stream']).to.equal(false);
        } else {
          expect(up).not.to.have.property(row.name);
        }
        if (row.name === 'task') expect((await w.gw.admin('GET', `/receipts/${res.body.receiptId}`)).body.task).to.equal('remediation');
      });
    }
    if (row.refused) {
      const [value, code] = REFUSED[row.name] ?? [];
      it(`refuses ${row.name}=${JSON.stringify(value)} with 400 ${row.refused.code}, param and type, forwarding nothing`, async () => {
        expect(code, `a refused sample for ${row.name}`).to.equal(row.refused!.code);
        const res = await chat({ ...base(), [row.name]: value });
        expect(res.status).to.equal(400);
        expect(res.body.error).to.include({ code, param: row.name, type: 'invalid_request_error' });
        expect(res.body.error.message).to.include(row.name);
        expect(await w.upstream.requests()).to.have.length(0);
      });
    }
  }

  it('refuses an unknown field with 400 unknown-parameter naming it', async () => {
    const res = await chat({ ...base(), temprature: 0.2 });
    expect(res.status).to.equal(400);
    expect(res.body.error).to.include({ code: table.unknown.code, param: 'temprature', type: 'invalid_request_error' });
  });

  it('does not repeat an unknown key that could be a pasted secret', async () => {
    const key = 'sk-proj-' + 'a1B2'.repeat(12);
    for (const body of [
      { ...base(), [key]: 1 },
      { ...base(), messages: [{ role: 'user', content: 'x', [key]: 1 }] },
    ]) {
      const res = await chat(body);
      expect(res.status).to.equal(400);
      expect(JSON.stringify(res.body)).not.to.include(key);
    }
  });

  describe('a fresh answer on purpose: seed takes part in the job identity', () => {
    it('answers the identical request from its job, and a new seed with a new job', async () => {
      const body = base();
      const a = await chat(body);
      const b = await chat(body);
      expect(b.body.id).to.equal(a.body.id);
      const c = await chat({ ...body, seed: 1 });
      const d = await chat({ ...body, seed: 2 });
      const e = await chat({ ...body, seed: 2 });
      expect(new Set([a.body.id, c.body.id, d.body.id]).size).to.equal(3);
      expect(e.body.id).to.equal(d.body.id);
      expect(await w.upstream.requests()).to.have.length(3);
    });
  });

  describe('messages as clients send them', () => {
    it('takes the developer role as the system turn and forwards it as system', async () => {
      const res = await chat({
        ...base(),
        messages: [
          { role: 'developer', content: 'be brief' },
          { role: 'user', content: 'hi dev' },
        ],
      });
      expect(res.status).to.equal(200);
      expect((await sent())['messages']).to.deep.equal([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi dev' },
      ]);
    });

    it('refuses a developer turn after a system turn, as a second system turn', async () => {
      const res = await chat({
        ...base(),
        messages: [
          { role: 'system', content: 'a' },
          { role: 'developer', content: 'b' },
          { role: 'user', content: 'c' },
        ],
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.include({ code: 'invalid-messages', param: 'messages[1].role' });
    });

    it('joins content given as text parts', async () => {
      const res = await chat({
        ...base(),
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'first' },
              { type: 'text', text: 'second' },
            ],
          },
        ],
      });
      expect(res.status).to.equal(200);
      expect((await sent())['messages']).to.deep.equal([{ role: 'user', content: 'first\nsecond' }]);
    });

    it("joins an assistant turn's refusal parts into its refusal", async () => {
      const messages = [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that' }] },
        { role: 'user', content: 'ok' },
      ];
      const res = await chat({ ...base(), messages });
      expect(res.status).to.equal(200);
      expect(((await sent())['messages'] as unknown[])[1]).to.deep.equal({ role: 'assistant', content: null, refusal: 'I cannot help with that' });
    });

    it('drops the bookkeeping clients keep on a replayed assistant message, and refuses a live legacy function_call', async () => {
      const replayed = {
        role: 'assistant',
        content: 'earlier answer',
        annotations: [],
        function_call: null,
        audio: null,
        provider_specific_fields: null,
        reasoning_content: 'thought',
      };
      const res = await chat({ ...base(), messages: [{ role: 'user', content: 'q' }, replayed, { role: 'user', content: 'more' }] });
      expect(res.status).to.equal(200);
      expect(((await sent())['messages'] as unknown[])[1]).to.deep.equal({ role: 'assistant', content: 'earlier answer' });
      const legacy = await chat({
        ...base(),
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
        ],
      });
      expect(legacy.status).to.equal(400);
      expect(legacy.body.error).to.include({ code: 'legacy-functions-not-supported', param: 'messages[1].function_call' });
    });

    it('refuses an image part by name', async () => {
      const res = await chat({
        ...base(),
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'see' },
              { type: 'image_url', image_url: { url: 'data:' } },
            ],
          },
        ],
      });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.include({ code: 'invalid-messages', param: 'messages[0].content[1].type' });
    });

    it('forwards name, refusal, and tool calls with null content', async () => {
      const messages = [
        { role: 'user', name: 'alice', content: 'look it up' },
        { role: 'assistant', content: null, refusal: null, tool_calls: [{ id: 'x1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'x1', content: 'nothing found' },
        { role: 'assistant', content: 'sorry', refusal: 'I will not guess' },
        { role: 'user', content: 'fine' },
      ];
      const res = await chat({ ...base(), tools: ACCEPTED['tools'], messages });
      expect(res.status).to.equal(200);
      expect((await sent())['messages']).to.deep.equal([
        { role: 'user', name: 'alice', content: 'look it up' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'nothing found' },
        { role: 'assistant', content: 'sorry', refusal: 'I will not guess' },
        { role: 'user', content: 'fine' },
      ]);
    });
  });

  describe('the answer as clients read it', () => {
    it('passes system_fingerprint and reasoning_tokens through when the upstream gives them', async () => {
      await w.upstream.behave({
        mode: 'echo',
        systemFingerprint: 'fp_abc',
        reasoningTokens: 5,
        usage: { prompt_tokens: 11, completion_tokens: 7, cached_tokens: 3 },
      });
      const res = await chat(base());
      expect(res.body).to.include({ object: 'chat.completion', model: 'shared-general-a', system_fingerprint: 'fp_abc' });
      expect(res.body.id).to.match(/^chatcmpl-/);
      expect(res.body.created).to.be.a('number');
      expect(res.body.usage).to.deep.include({ prompt_tokens_details: { cached_tokens: 3 }, completion_tokens_details: { reasoning_tokens: 5 } });
    });

    it("sends OpenAI's usage chunk before [DONE] when stream_options.include_usage is set, and not otherwise", async () => {
      const events = async (body: Record<string, unknown>) => {
        const res = await chat(body);
        const out: any[] = [];
        const parser = createParser({ onEvent: (e) => out.push(e.data === '[DONE]' ? '[DONE]' : JSON.parse(e.data)) });
        parser.feed(res.body as string);
        return out;
      };
      const plain = await events({ ...base(), stream: true });
      expect(plain).to.have.length(3);
      expect(plain[0]).not.to.have.property('usage');
      const withUsage = await events({ ...base(), stream: true, stream_options: { include_usage: true } });
      expect(withUsage).to.have.length(4);
      expect(withUsage[0].usage).to.equal(null);
      expect(withUsage[2]).to.include({ object: 'chat.completion.chunk' });
      expect(withUsage[2].choices).to.deep.equal([]);
      expect(withUsage[2].usage).to.include({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
      expect(withUsage[3]).to.equal('[DONE]');
    });

    it('answers errors with type and param where OpenAI clients read them', async () => {
      const unauth = await w.gw.chat(null, base());
      expect(unauth.status).to.equal(401);
      expect(unauth.body.error).to.include({ code: 'unauthenticated', type: 'authentication_error', param: null });
      const tooMany = await chat({ ...base(), max_tokens: 40_000 });
      expect(tooMany.body.error).to.include({ code: 'max-tokens-out-of-range', type: 'invalid_request_error', param: 'max_tokens' });
      const missing = await chat({ model: 'shared-general-a' });
      expect(missing.body.error).to.include({ code: 'invalid-request', param: 'messages' });
    });
  });
});
