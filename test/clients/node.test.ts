/**
 * Real Node clients, unchanged, against a live gateway with the recording upstream playing a model in a tool
 * loop (mode `agent`) and a real Redis: the official `openai` SDK, LangChain's ChatOpenAI with bindTools, and
 * the Vercel AI SDK through @ai-sdk/openai-compatible. Each makes a plain call, a streamed call, a tool-call
 * round trip (the client runs the tool and sends its result back) and meets an error it raises as its own
 * typed error. Versions are pinned in package.json (devDependencies).
 */
import { expect } from 'chai';
import OpenAI from 'openai';
import { ChatOpenAI } from '@langchain/openai';
import { AIMessage, AIMessageChunk, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { APICallError, generateText, stepCountIs, streamText, tool } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';
import { startWorld, type World } from '../helpers/world.js';

const MODEL = 'shared-general-a';

describe('clients (Node): openai, LangChain, Vercel AI SDK against a live gateway', function () {
  this.timeout(60_000);
  let w: World;
  let token: string;
  let baseURL: string;
  let n = 0;
  /** A fresh prompt per call, so no two calls share a job. */
  const prompt = (what: string) => `${what} #${n++}`;

  before(async () => {
    w = await startWorld();
    token = (await w.gw.principal()).token;
    baseURL = `${w.gw.apiUrl}/v1`;
  });
  after(() => w.stop());
  beforeEach(async () => {
    await w.upstream.reset();
    await w.upstream.behave({ mode: 'agent' });
  });

  /** What the upstream saw, to check the tool result went back up. */
  const lastToolResult = async () => {
    const reqs = await w.upstream.requests();
    const msgs = reqs[reqs.length - 1]!.body['messages'] as Array<{ role: string; content: string }>;
    return msgs[msgs.length - 1]!;
  };

  describe('openai (Node SDK)', () => {
    const client = () => new OpenAI({ apiKey: token, baseURL, maxRetries: 0 });

    it('plain call', async () => {
      const res = await client().chat.completions.create({
        model: MODEL,
        max_completion_tokens: 2048,
        messages: [
          { role: 'developer', content: 'be brief' },
          { role: 'user', content: prompt('hello') },
        ],
      });
      expect(res.choices[0]!.message.content).to.match(/^recorded answer/);
      expect(res.usage!.total_tokens).to.equal(18);
    });

    /** Every chunk's text and every non-null usage it carried, in order. */
    const drain = async (stream: AsyncIterable<OpenAI.ChatCompletionChunk>) => {
      let text = '';
      const usages: OpenAI.CompletionUsage[] = [];
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usages.push(chunk.usage);
      }
      return { text, usages };
    };

    it("streamed call, usage included: usage comes exactly once, equal to the upstream's", async () => {
      const stream = await client().chat.completions.create({
        model: MODEL,
        max_tokens: 2048,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: prompt('stream') }],
      });
      const { text, usages } = await drain(stream);
      expect(text).to.match(/^recorded answer/);
      // Clients that add usage up across chunks must land on the upstream's counts (11 in, 7 out).
      expect(usages).to.have.length(1);
      expect(usages[0]).to.deep.include({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
      const summed = usages.reduce(
        (a, u) => ({ prompt: a.prompt + u.prompt_tokens, completion: a.completion + u.completion_tokens, total: a.total + u.total_tokens }),
        { prompt: 0, completion: 0, total: 0 },
      );
      expect(summed).to.deep.equal({ prompt: 11, completion: 7, total: 18 });
    });

    it('streamed call, usage not asked for: no chunk carries usage', async () => {
      const stream = await client().chat.completions.create({
        model: MODEL,
        max_tokens: 2048,
        stream: true,
        messages: [{ role: 'user', content: prompt('stream') }],
      });
      const { text, usages } = await drain(stream);
      expect(text).to.match(/^recorded answer/);
      expect(usages).to.deep.equal([]);
    });

    it('tool call round trip', async () => {
      const tools: OpenAI.ChatCompletionTool[] = [
        { type: 'function', function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
      ];
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: prompt('weather?') }];
      const first = await client().chat.completions.create({ model: MODEL, max_tokens: 2048, tools, messages });
      const call = first.choices[0]!.message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
      const args = JSON.parse(call.function.arguments) as { city: string };
      messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: `sunny in ${args.city}` });
      const second = await client().chat.completions.create({ model: MODEL, max_tokens: 2048, tools, messages });
      expect(second.choices[0]!.message.content).to.equal('the tool said: sunny in Paris');
    });

    it('typed error', async () => {
      const bad = new OpenAI({ apiKey: 'pc_not_a_token', baseURL, maxRetries: 0 });
      const err = await bad.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(OpenAI.AuthenticationError);
      expect((err as InstanceType<typeof OpenAI.AuthenticationError>).code).to.equal('invalid-token');
      const refused = await client()
        .chat.completions.create({ model: MODEL, n: 2, messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(refused).to.be.instanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('n');
      const unverified = await client()
        .chat.completions.create({ model: 'red-whitehacker-a', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(unverified).to.be.instanceOf(OpenAI.PermissionDeniedError);
      expect((unverified as InstanceType<typeof OpenAI.PermissionDeniedError>).code).to.equal('verification-required');
      const unknown = await client()
        .chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(unknown).to.be.instanceOf(OpenAI.NotFoundError);
      expect((unknown as InstanceType<typeof OpenAI.NotFoundError>).type).to.equal('not_found_error');
    });
  });

  describe('LangChain (ChatOpenAI with bindTools)', () => {
    const model = (apiKey = token) => new ChatOpenAI({ model: MODEL, apiKey, maxTokens: 2048, maxRetries: 0, configuration: { baseURL } });

    it('plain call', async () => {
      const res = await model().invoke([new HumanMessage(prompt('hello'))]);
      expect(res.content).to.match(/^recorded answer/);
    });

    it("streamed call: the chunks summed (as LangChain adds them) give the upstream's usage once", async () => {
      let all: AIMessageChunk | undefined;
      for await (const chunk of await model().stream([new HumanMessage(prompt('stream'))])) all = all ? all.concat(chunk) : chunk;
      expect(all!.content)
        .to.be.a('string')
        .that.matches(/^recorded answer/);
      expect(all!.usage_metadata).to.deep.include({ input_tokens: 11, output_tokens: 7, total_tokens: 18 });
    });

    it('tool call round trip', async () => {
      const weather = { name: 'weather', description: 'Weather in a city', schema: z.object({ city: z.string() }) };
      const bound = model().bindTools([weather]);
      const history: Array<HumanMessage | AIMessage | ToolMessage> = [new HumanMessage(prompt('weather?'))];
      const first = await bound.invoke(history);
      const call = first.tool_calls![0]!;
      expect(call.name).to.equal('weather');
      history.push(first, new ToolMessage({ tool_call_id: call.id!, content: `sunny in ${call.args['city']}` }));
      const second = await bound.invoke(history);
      expect(second.content).to.equal('the tool said: sunny in Paris');
      expect(await lastToolResult()).to.deep.include({ role: 'tool', content: 'sunny in Paris' });
    });

    it('typed error', async () => {
      const err = (await model('pc_not_a_token')
        .invoke([new HumanMessage('x')])
        .catch((e: unknown) => e)) as Error & { status?: number; code?: string };
      expect(err.constructor.name).to.equal('AuthenticationError');
      expect(err.status).to.equal(401);
    });
  });

  describe('Vercel AI SDK (@ai-sdk/openai-compatible)', () => {
    const provider = (apiKey = token) => createOpenAICompatible({ name: 'portcullis', baseURL, apiKey, includeUsage: true });

    it('plain call (generateText)', async () => {
      const res = await generateText({ model: provider()(MODEL), prompt: prompt('hello'), maxOutputTokens: 2048, maxRetries: 0 });
      expect(res.text).to.match(/^recorded answer/);
      expect(res.usage.totalTokens).to.equal(18);
    });

    it('streamed call (streamText)', async () => {
      const res = streamText({ model: provider()(MODEL), prompt: prompt('stream'), maxOutputTokens: 2048, maxRetries: 0 });
      let text = '';
      for await (const part of res.textStream) text += part;
      expect(text).to.match(/^recorded answer/);
      expect((await res.usage).totalTokens).to.equal(18);
    });

    it('tool call round trip (generateText with a tool)', async () => {
      const res = await generateText({
        model: provider()(MODEL),
        prompt: prompt('weather?'),
        maxOutputTokens: 2048,
        maxRetries: 0,
        tools: {
          weather: tool({ description: 'Weather in a city', inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => `sunny in ${city}` }),
        },
        stopWhen: stepCountIs(3),
      });
      expect(res.text).to.equal('the tool said: sunny in Paris');
      expect(res.steps).to.have.length(2);
    });

    it('typed error', async () => {
      const err = await generateText({ model: provider('pc_not_a_token')(MODEL), prompt: 'x', maxRetries: 0 }).catch((e: unknown) => e);
      expect(APICallError.isInstance(err)).to.equal(true);
      expect((err as APICallError).statusCode).to.equal(401);
      expect((err as APICallError).message).to.include('personal access token');
    });
  });
});
