/**
 * The chat path as a client sees it, through the official `openai` npm client: blue-team calls, the
 * emulated stream, tools and a tool-result round trip, the red team refused then admitted after a rung
 * grant, and the answer's extra fields (billing, receiptId, usage, chargedMicroUSD).
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { startWorld, type World } from '../helpers/world.js';

describe('chat completions: happy path (openai client, real upstream and redis)', () => {
  let w: World;
  let blue: { id: string; token: string };
  const client = (token: string) => new OpenAI({ apiKey: token, baseURL: `${w.gw.apiUrl}/v1`, maxRetries: 0 });

  before(async () => {
    w = await startWorld();
    blue = await w.gw.principal();
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  it('answers a blue-team call with a chat.completion plus billing, receiptId, usage and chargedMicroUSD', async () => {
    const res = (await client(blue.token).chat.completions.create({
      model: 'shared-general-a',
      max_tokens: 2048,
      messages: [
        { role: 'system', content: 'You review code.' },
        { role: 'user', content: 'Review: int main(){return 0;}' },
      ],
    })) as OpenAI.ChatCompletion & { billing: string; receiptId: string; chargedMicroUSD: number };
    expect(res.object).to.equal('chat.completion');
    expect(res.model).to.equal('shared-general-a');
    expect(res.choices[0]!.message).to.deep.include({ role: 'assistant', content: 'recorded answer 1' });
    expect(res.choices[0]!.finish_reason).to.equal('stop');
    expect(res.usage).to.deep.include({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect(res.billing).to.equal('free');
    expect(res.chargedMicroUSD).to.equal(0);
    expect(res.receiptId).to.match(/^rcpt_/);
    const receipt = await w.gw.admin('GET', `/receipts/${res.receiptId}`);
    expect(receipt.status).to.equal(200);
    expect(receipt.body).to.include({ principalId: blue.id, outcome: 'answered', model: 'shared-general-a', task: 'code-review', route: 'shared' });
  });

  it('forwards the upstream model id, the messages and max_tokens, and drops sampling parameters', async () => {
    await client(blue.token).chat.completions.create({
      model: 'shared-general-b',
      max_tokens: 4000,
      temperature: 0.2,
      top_p: 0.9,
      seed: 7,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const [req] = await w.upstream.requests();
    expect(req!.path).to.equal('/v1/chat/completions');
    expect(req!.body).to.deep.equal({ model: 'shared-general-b', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4000, stream: false });
  });

  it('streams exactly one content chunk, one finish chunk with billing and receiptId, then [DONE]', async () => {
    const stream = await client(blue.token).chat.completions.create({
      model: 'shared-general-a',
      max_tokens: 2048,
      stream: true,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const chunks: Array<OpenAI.ChatCompletionChunk & { billing?: string; receiptId?: string }> = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).to.have.length(2);
    expect(chunks[0]!.choices[0]!.delta).to.deep.equal({ role: 'assistant', content: 'recorded answer 1' });
    expect(chunks[0]!.choices[0]!.finish_reason).to.equal(null);
    expect(chunks[1]!.choices[0]!.delta).to.deep.equal({});
    expect(chunks[1]!.choices[0]!.finish_reason).to.equal('stop');
    expect(chunks[1]!.billing).to.equal('free');
    expect(chunks[1]!.receiptId).to.match(/^rcpt_/);
  });

  it('returns tool calls to the client and takes the tool result back as role tool', async () => {
    await w.upstream.behave({ mode: 'tool-call' });
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'report', description: 'Structured verdict', parameters: { type: 'object', properties: { verdict: { type: 'string' } } } },
      },
    ];
    const first = await client(blue.token).chat.completions.create({
      model: 'shared-general-a',
      max_tokens: 2048,
      tools,
      tool_choice: { type: 'function', function: { name: 'report' } },
      messages: [{ role: 'user', content: 'Give a verdict as JSON.' }],
    });
    const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0]!.finish_reason).to.equal('tool_calls');
    expect(call.function).to.deep.equal({ name: 'report', arguments: '{"verdict":"safe"}' });
    expect(JSON.parse(call.function.arguments)).to.deep.equal({ verdict: 'safe' });

    await w.upstream.behave({ mode: 'echo', content: 'done' });
    const second = await client(blue.token).chat.completions.create({
      model: 'shared-general-a',
      max_tokens: 2048,
      tools,
      messages: [
        { role: 'user', content: 'Give a verdict as JSON.' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"ran":"locally"}' },
      ],
    });
    expect(second.choices[0]!.message.content).to.equal('done');
    const reqs = await w.upstream.requests();
    expect(reqs[0]!.body['tools']).to.deep.equal(tools);
    expect(reqs[0]!.body['tool_choice']).to.deep.equal({ type: 'function', function: { name: 'report' } });
    // Tool-call ids go up as the gateway's own, consistently: the call and its result still pair.
    const sent = reqs[1]!.body['messages'] as Array<Record<string, any>>;
    expect(sent[1]!['tool_calls'][0]).to.deep.equal({ id: 'call_0', type: 'function', function: call.function });
    expect(sent[2]).to.deep.equal({ role: 'tool', tool_call_id: 'call_0', content: '{"ran":"locally"}' });
  });

  it('streams tool calls in the delta the way OpenAI clients assemble them', async () => {
    await w.upstream.behave({ mode: 'tool-call' });
    const runner = client(blue.token).chat.completions.stream({
      model: 'shared-general-a',
      max_tokens: 2048,
      tools: [{ type: 'function', function: { name: 'report', parameters: { type: 'object' } } }],
      messages: [{ role: 'user', content: 'verdict?' }],
    });
    const final = await runner.finalChatCompletion();
    const tc = final.choices[0]!.message.tool_calls![0]!;
    expect(tc.function).to.deep.equal({ name: 'report', arguments: '{"verdict":"safe"}' });
    expect(final.choices[0]!.finish_reason).to.equal('tool_calls');
  });

  it('refuses a red-team model before verification, then admits it after a card grant, echoing the routed id', async () => {
    const red = await w.gw.principal();
    const body = { model: 'red-whitehacker-a', max_tokens: 2048, messages: [{ role: 'user', content: 'triage this' }] };
    const refused = await w.gw.chat(red.token, body);
    expect(refused.status).to.equal(403);
    expect(refused.body.error.code).to.equal('verification-required');
    expect(await w.upstream.requests()).to.have.length(0);

    const grant = await w.gw.admin('POST', `/principals/${encodeURIComponent(red.id)}/rung`, { rung: 'card' });
    expect(grant.body.scopes).to.deep.include({ id: 'owned', status: 'approved', tasks: ['code-review'], approvedAt: grant.body.scopes[0].approvedAt });
    const admitted = await w.gw.chat(red.token, body);
    expect(admitted.status).to.equal(200);
    expect(admitted.body.model).to.equal('whitehacker-a-flash-next-cybersecurity-nvfp4');
    const [req] = await w.upstream.requests();
    expect(req!.body['model']).to.equal('whitehacker-a-flash-next-cybersecurity-nvfp4');
  });
});
