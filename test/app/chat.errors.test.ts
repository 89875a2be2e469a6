/**
 * Every kind of bad input on the chat path gets its own `{error:{code,message}}` and status, and leaves
 * nothing behind: nothing forwarded upstream (the recording upstream is asked), and no receipt for a call
 * that never reached admission step 3.
 */
import { expect } from 'chai';
import { allReceipts, startWorld, type World } from '../helpers/world.js';

describe('chat completions: bad input', () => {
  let w: World;
  let token: string;
  const ok = { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] };

  const receiptCount = async () => (await allReceipts(w)).length;

  before(async () => {
    w = await startWorld();
    token = (await w.gw.principal()).token;
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  const cases: Array<[string, () => Promise<{ status: number; body: any }>, number, string]> = [
    ['wrong content-type', () => w.gw.chat(token, JSON.stringify(ok), { 'content-type': 'text/plain' }), 415, 'unsupported-media-type'],
    [
      'no content-type',
      () =>
        fetch(`${w.gw.apiUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: new Uint8Array(Buffer.from(JSON.stringify(ok))),
        }).then(async (r) => ({ status: r.status, body: await r.json() })),
      415,
      'unsupported-media-type',
    ],
    ['a body over 2 MiB', () => w.gw.chat(token, { ...ok, messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024 + 1) }] }), 413, 'payload-too-large'],
    ['invalid JSON', () => w.gw.chat(token, '{"model": '), 400, 'invalid-json'],
    ['a JSON array', () => w.gw.chat(token, '[]'), 400, 'invalid-request'],
    ['no model', () => w.gw.chat(token, { messages: ok.messages }), 400, 'invalid-request'],
    ['no messages', () => w.gw.chat(token, { model: 'shared-general-a' }), 400, 'invalid-request'],
    ['empty messages', () => w.gw.chat(token, { ...ok, messages: [] }), 400, 'invalid-request'],
    ['an unknown field', () => w.gw.chat(token, { ...ok, frobnicate: true }), 400, 'unknown-parameter'],
    ['response_format (use a tool call)', () => w.gw.chat(token, { ...ok, response_format: { type: 'json_object' } }), 400, 'response-format-not-supported'],
    [
      'image content parts',
      () => w.gw.chat(token, { ...ok, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:' } }] }] }),
      400,
      'invalid-messages',
    ],
    ['a user turn with null content', () => w.gw.chat(token, { ...ok, messages: [{ role: 'user', content: null }] }), 400, 'invalid-messages'],
    ['an unknown role', () => w.gw.chat(token, { ...ok, messages: [{ role: 'wizard', content: 'x' }] }), 400, 'invalid-request'],
    [
      'a second system turn',
      () =>
        w.gw.chat(token, {
          ...ok,
          messages: [
            { role: 'system', content: 'a' },
            { role: 'user', content: 'b' },
            { role: 'system', content: 'c' },
          ],
        }),
      400,
      'invalid-messages',
    ],
    [
      'a system turn not first',
      () =>
        w.gw.chat(token, {
          ...ok,
          messages: [
            { role: 'user', content: 'b' },
            { role: 'system', content: 'c' },
          ],
        }),
      400,
      'invalid-messages',
    ],
    [
      'a tool turn without tool_call_id',
      () =>
        w.gw.chat(token, {
          ...ok,
          messages: [
            { role: 'user', content: 'b' },
            { role: 'tool', content: 'r' },
          ],
        }),
      400,
      'invalid-messages',
    ],
    [
      'an assistant turn with neither content nor tool calls',
      () =>
        w.gw.chat(token, {
          ...ok,
          messages: [
            { role: 'assistant', content: null },
            { role: 'user', content: 'b' },
          ],
        }),
      400,
      'invalid-messages',
    ],
    ['257 turns', () => w.gw.chat(token, { ...ok, messages: Array.from({ length: 257 }, () => ({ role: 'user', content: 'x' })) }), 400, 'too-many-turns'],
    [
      '129 tools',
      () => w.gw.chat(token, { ...ok, tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })) }),
      400,
      'too-many-tools',
    ],
    ['max_tokens 32769', () => w.gw.chat(token, { ...ok, max_tokens: 32769 }), 400, 'max-tokens-out-of-range'],
    ['max_tokens 0', () => w.gw.chat(token, { ...ok, max_tokens: 0 }), 400, 'invalid-request'],
    ['max_tokens not an integer', () => w.gw.chat(token, { ...ok, max_tokens: 12.5 }), 400, 'invalid-request'],
    ['524,289 characters of input', () => w.gw.chat(token, { ...ok, messages: [{ role: 'user', content: 'x'.repeat(524_289) }] }), 400, 'input-too-large'],
    [
      'input over the limit counting tool definitions',
      () =>
        w.gw.chat(token, {
          ...ok,
          messages: [{ role: 'user', content: 'x'.repeat(524_000) }],
          tools: [{ type: 'function', function: { name: 'big', description: 'd'.repeat(400) } }],
        }),
      400,
      'input-too-large',
    ],
    ['an unknown task', () => w.gw.chat(token, { ...ok, task: 'poetry' }), 400, 'invalid-request'],
    ['stream not a boolean', () => w.gw.chat(token, { ...ok, stream: 'yes' }), 400, 'invalid-request'],
    ['an unknown model', () => w.gw.chat(token, { ...ok, model: 'gpt-nonexistent' }), 404, 'model-not-found'],
    ['a model whose route is not configured', () => w.gw.chat(token, { ...ok, model: 'red-whitehacker-b' }), 503, 'route-not-configured'],
    ['an offensive task on the blue team', () => w.gw.chat(token, { ...ok, task: 'payload-crafting' }), 403, 'task-not-offered'],
  ];

  for (const [name, send, status, code] of cases) {
    it(`answers ${name} with ${status} ${code} and forwards nothing`, async () => {
      const before = await receiptCount();
      const res = await send();
      expect(res.status).to.equal(status);
      expect(res.body.error.code).to.equal(code);
      expect(res.body.error.message).to.be.a('string').and.not.empty;
      expect(await w.upstream.requests()).to.have.length(0);
      // Refusals at steps 1-2 and shape errors spend nothing and leave no receipt; step 3 leaves one.
      expect(await receiptCount()).to.equal(code === 'task-not-offered' ? before + 1 : before);
    });
  }

  describe('tool results, tool choices and text parts that do not add up', () => {
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const refused: Array<[string, Record<string, unknown>, string, string, string]> = [
      [
        'a tool result whose tool_call_id matches no call',
        {
          messages: [
            { role: 'user', content: 'go' },
            { role: 'tool', tool_call_id: 'nope-secretish', content: 'x' },
          ],
        },
        'unknown-tool-call-id',
        'messages[1].tool_call_id',
        'nope-secretish',
      ],
      [
        'a tool result naming a call another id than the one made',
        { tools, messages: [{ role: 'user', content: 'go' }, call, { role: 'tool', tool_call_id: 'c2', content: 'x' }] },
        'unknown-tool-call-id',
        'messages[2].tool_call_id',
        'c2',
      ],
      [
        'a tool result before the call it answers',
        { tools, messages: [{ role: 'user', content: 'go' }, { role: 'tool', tool_call_id: 'c1', content: 'x' }, call] },
        'unknown-tool-call-id',
        'messages[1].tool_call_id',
        'c1"',
      ],
      [
        'a tool_choice naming a function not in tools',
        { tools, tool_choice: { type: 'function', function: { name: 'g-undefined' } }, messages: [{ role: 'user', content: 'x' }] },
        'unknown-tool-choice',
        'tool_choice.function.name',
        'g-undefined',
      ],
      [
        'a tool_choice naming a function with no tools at all',
        { tool_choice: { type: 'function', function: { name: 'g-undefined' } }, messages: [{ role: 'user', content: 'x' }] },
        'unknown-tool-choice',
        'tool_choice.function.name',
        'g-undefined',
      ],
      [
        'a text part without text',
        { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
        'invalid-messages',
        'messages[0].content[0].text',
        'no images',
      ],
    ];
    for (const [name, body, code, param, unsaid] of refused) {
      it(`answers ${name} with 400 ${code}, naming ${param}, and forwards nothing`, async () => {
        const res = await w.gw.chat(token, { ...ok, ...body });
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.code).to.equal(code);
        expect(res.body.error.param).to.equal(param);
        expect(res.body.error.message).to.contain(param).and.not.contain(unsaid);
        expect(await w.upstream.requests()).to.have.length(0);
      });
    }

    it('forwards a tool result that answers a call an earlier turn made, and a tool_choice naming a tool', async () => {
      const res = await w.gw.chat(token, {
        ...ok,
        tools,
        tool_choice: { type: 'function', function: { name: 'f' } },
        messages: [{ role: 'user', content: 'go' }, call, { role: 'tool', tool_call_id: 'c1', content: 'x' }, { role: 'user', content: 'and?' }],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(await w.upstream.requests()).to.have.length(1);
    });
  });

  it('names the offending field in the message', async () => {
    const res = await w.gw.chat(token, {
      ...ok,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'user', content: 5 },
      ],
    });
    expect(res.body.error.message).to.contain('messages[1].content');
  });

  it('accepts exactly the limits: 256 turns, 128 tools, max_tokens 32768', async () => {
    const res = await w.gw.chat(token, {
      ...ok,
      max_tokens: 32768,
      messages: Array.from({ length: 256 }, () => ({ role: 'user', content: 'x' })),
      tools: Array.from({ length: 128 }, (_, i) => ({ type: 'function', function: { name: `t${i}` } })),
    });
    expect(res.status).to.equal(200);
  });

  it('answers 405 wire-not-offered on /v1/messages, /v1/responses and the Gemini wire', async () => {
    for (const path of ['/v1/messages', '/v1/responses', '/v1beta/models/x:generateContent', '/v1/models/shared-general-a:generateContent']) {
      const res = await fetch(`${w.gw.apiUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, path).to.equal(405);
      expect(((await res.json()) as any).error.code).to.equal('wire-not-offered');
    }
  });

  it('answers unknown routes 404 and wrong methods 405 in the error format', async () => {
    const missing = await fetch(`${w.gw.apiUrl}/v1/nothing`);
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as any).error.code).to.equal('not-found');
    const wrong = await fetch(`${w.gw.apiUrl}/v1/chat/completions`);
    expect(wrong.status).to.equal(405);
    expect(((await wrong.json()) as any).error.code).to.equal('method-not-allowed');
  });
});
