/**
 * The upstream's answer, as the client gets it and as the gateway keeps it, against the recording upstream
 * answering in odd shapes and a real Redis: every free-text field the client reads (system_fingerprint,
 * model, content, refusal, tool calls) is masked, streamed or not, and so is everything stored (the job
 * result an idempotent retry replays, the receipt); finish_reason is one of OpenAI's values; a legacy
 * function_call is the tool call it stands for; content that is neither text nor null is a 502, not an
 * empty answer.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { secretSamples } from '../guard/helpers/secrets.js';

const KEY = secretSamples().find((s) => s.name === 'openai project')!.value;
const MASK = '[REDACTED:openai-key]';

/** Every string held in the world's Redis, whatever the key's type. */
async function everythingStored(w: World): Promise<string> {
  const { createClient } = await import('redis');
  const c = createClient({ url: w.redis.url });
  await c.connect();
  try {
    const out: string[] = [];
    for (const key of await c.keys('*')) {
      const type = await c.type(key);
      if (type === 'string') out.push(String(await c.get(key)));
      else if (type === 'hash') out.push(JSON.stringify(await c.hGetAll(key)));
      else if (type === 'list') out.push(JSON.stringify(await c.lRange(key, 0, -1)));
      else if (type === 'set') out.push(JSON.stringify(await c.sMembers(key)));
      else if (type === 'zset') out.push(JSON.stringify(await c.zRange(key, 0, -1)));
      else if (type === 'stream') out.push(JSON.stringify(await c.xRange(key, '-', '+')));
      else out.push(`${key}: ${type}`);
    }
    return out.join('\n');
  } finally {
    await c.close();
  }
}

/** The chunks of an emulated stream, parsed. */
const chunks = (text: string) =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: {'))
    .map((e) => JSON.parse(e.slice('data: '.length)) as Record<string, any>);

const usage = { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 };
const answer = (message: Record<string, unknown>, extra: Record<string, unknown> = {}, choice: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion',
  created: 1_700_000_000,
  ...extra,
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop', ...choice }],
  usage,
});

describe('the upstream answer: every string masked, served and stored (recording upstream, real redis)', () => {
  let w: World;
  let p: { id: string; token: string };
  let seed = 0;

  before(async () => {
    w = await startWorld();
    p = await w.gw.principal();
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  const chat = (body: Record<string, unknown>, headers?: Record<string, string>) =>
    w.gw.chat(p.token, { model: 'shared-general-a', max_tokens: 256, seed: seed++, messages: [{ role: 'user', content: 'hi' }], ...body }, headers);

  it('masks a key in system_fingerprint, plain and streamed, and stores none of it', async () => {
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: 'ok' }, { system_fingerprint: KEY }) });
    const plain = await chat({});
    expect(plain.status, JSON.stringify(plain.body)).to.equal(200);
    expect(plain.body.system_fingerprint).to.equal(MASK);
    expect(JSON.stringify(plain.body)).not.to.contain(KEY.slice(10, 30));

    const streamed = await chat({ stream: true });
    expect(streamed.status).to.equal(200);
    const events = chunks(String(streamed.body));
    expect(events).to.have.length(2);
    for (const e of events) expect(e['system_fingerprint']).to.equal(MASK);
    expect(String(streamed.body)).not.to.contain(KEY.slice(10, 30));

    expect(await everythingStored(w)).not.to.contain(KEY.slice(10, 30));
  });

  it('answers finish_reason as one of OpenAI values: an unknown one (a key here) is what the message shows', async () => {
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: 'ok' }, {}, { finish_reason: KEY }) });
    const plain = await chat({});
    expect(plain.status, JSON.stringify(plain.body)).to.equal(200);
    expect(plain.body.choices[0].finish_reason).to.equal('stop');
    expect(plain.body.choices[0].message.content).to.equal('ok');

    const streamed = await chat({ stream: true });
    const events = chunks(String(streamed.body));
    expect(events.map((e) => e['choices'][0].finish_reason)).to.deep.equal([null, 'stop']);
    expect(String(streamed.body)).not.to.contain(KEY.slice(10, 30));

    // The known values pass as they are.
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: 'cut' }, {}, { finish_reason: 'length' }) });
    expect((await chat({})).body.choices[0].finish_reason).to.equal('length');
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: '' }, {}, { finish_reason: 'content_filter' }) });
    expect((await chat({})).body.choices[0].finish_reason).to.equal('content_filter');

    expect(await everythingStored(w)).not.to.contain(KEY.slice(10, 30));
  });

  it('keeps the job result masked: an idempotent retry replays the masked answer', async () => {
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: `use ${KEY}` }, { system_fingerprint: KEY }) });
    const key = { 'idempotency-key': `answer-${Date.now()}` };
    const first = await chat({ seed: 4242 }, key);
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    const again = await chat({ seed: 4242 }, key);
    expect(again.status).to.equal(200);
    expect((await w.upstream.requests()).length, 'the retry is a replay, not a second upstream call').to.equal(1);
    for (const res of [first, again]) {
      expect(res.body.choices[0].message.content).to.equal(`use ${MASK}`);
      expect(res.body.system_fingerprint).to.equal(MASK);
    }
    expect(await everythingStored(w)).not.to.contain(KEY.slice(10, 30));
  });

  it('refuses a model echoed as a key (502 upstream-model-mismatch), and the receipt keeps it masked', async () => {
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: 'ok' }, { model: KEY }) });
    const res = await chat({});
    expect(res.status).to.equal(502);
    expect(res.body.error.code).to.equal('upstream-model-mismatch');
    expect(JSON.stringify(res.body)).not.to.contain(KEY.slice(10, 30));
    expect(await everythingStored(w)).not.to.contain(KEY.slice(10, 30));
  });

  it('reads a legacy function_call answer as the tool call it stands for', async () => {
    await w.upstream.behave({
      mode: 'echo',
      raw: answer({ content: null, function_call: { name: 'lookup', arguments: `{"q":"${KEY}"}` } }, {}, { finish_reason: 'function_call' }),
    });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    const plain = await chat({ tools });
    expect(plain.status, JSON.stringify(plain.body)).to.equal(200);
    const choice = plain.body.choices[0];
    expect(choice.finish_reason).to.equal('tool_calls');
    expect(choice.message.tool_calls).to.have.length(1);
    expect(choice.message.tool_calls[0].type).to.equal('function');
    expect(choice.message.tool_calls[0].function).to.deep.equal({ name: 'lookup', arguments: `{"q":"${MASK}"}` });
    expect(choice.message.tool_calls[0].id).to.be.a('string').and.not.be.empty;

    const streamed = await chat({ tools, stream: true });
    const events = chunks(String(streamed.body));
    expect(events[0]!['choices'][0].delta.tool_calls[0].function.name).to.equal('lookup');
    expect(events[1]!['choices'][0].finish_reason).to.equal('tool_calls');
  });

  it('answers 502 upstream-error for content that is neither text nor null, not an empty answer', async () => {
    await w.upstream.behave({ mode: 'echo', raw: answer({ content: { text: 'an object' } }) });
    const res = await chat({});
    expect(res.status).to.equal(502);
    expect(res.body.error.code).to.equal('upstream-error');
    expect(res.body.error.message).to.contain('choices[0].message.content');
    expect(res.body.error.message).not.to.contain('an object');
  });

  it('joins content given as an array of text parts', async () => {
    await w.upstream.behave({
      mode: 'echo',
      raw: answer({
        content: [
          { type: 'text', text: 'one ' },
          { type: 'text', text: 'two' },
        ],
      }),
    });
    const res = await chat({});
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.choices[0].message.content).to.equal('one two');
  });

  it('masks a key the answer splits between its content and a tool call, or over two tool calls, in every part', async () => {
    const call = (id: string, args: string) => ({ id, type: 'function', function: { name: 'lookup', arguments: args } });
    const layouts: Array<[string, Record<string, unknown>]> = [
      ['content, then arguments', { content: `the key is ${KEY.slice(0, 60)}`, tool_calls: [call('c1', JSON.stringify({ rest: KEY.slice(60) }))] }],
      [
        'two tool calls',
        { content: null, tool_calls: [call('c1', JSON.stringify({ a: KEY.slice(0, 80) })), call('c2', JSON.stringify({ b: KEY.slice(80) }))] },
      ],
      ['two values of one call', { content: null, tool_calls: [call('c1', JSON.stringify({ a: KEY.slice(0, 80), b: KEY.slice(80) }))] }],
    ];
    for (const [layout, message] of layouts) {
      await w.upstream.reset();
      await w.upstream.behave({ mode: 'echo', raw: answer(message, {}, { finish_reason: 'tool_calls' }) });
      for (const stream of [false, true]) {
        const res = await chat(stream ? { stream: true } : {});
        expect(res.status, `${layout}: ${JSON.stringify(res.body)}`).to.equal(200);
        const served = stream ? String(res.body) : JSON.stringify(res.body);
        for (const part of [KEY.slice(0, 60), KEY.slice(60), KEY.slice(80)]) expect(served, layout).not.to.contain(part.slice(-12));
        expect(served, layout).to.contain(MASK.slice(1, -1));
      }
      if (layout === 'content, then arguments') {
        const plain = await chat({});
        expect(plain.body.choices[0].message.content).to.equal(`the key is ${MASK}`);
        expect(JSON.parse(plain.body.choices[0].message.tool_calls[0].function.arguments)).to.deep.equal({ rest: MASK });
        expect(plain.body.choices[0].message.tool_calls[0].function.name).to.equal('lookup');
      }
    }
    expect(await everythingStored(w)).not.to.contain(KEY.slice(-12));
  });
});
