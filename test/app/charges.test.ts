/**
 * Charges equal usage, through the public routes, on the Redis store and on the memory store: a paid call
 * is charged the usage the upstream reports at the published rates, whatever max_tokens it asked for and
 * whatever script its text is in; the reservation is a true upper bound (UTF-8 bytes of every forwarded
 * string, the gateway's tool-call ids and a string tool choice included, + 8 tokens a message + 16 a tool
 * call + max_tokens); and usage above even that bound is charged in full, takes the balance below zero, is noted on
 * the receipt, and the next paid call is 402 until credits are added.
 *
 * Rates (catalog/billing.yaml): input 900,000, cached input 225,000, output 4,500,000 micro-USD per million
 * tokens. No free allowance here, so every call with credits is paid.
 */
import { expect } from 'chai';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { smallLimitsRoot } from '../helpers/billing.js';

for (const kind of ['redis', 'memory'] as const) {
  describe(`charges equal usage (${kind} store)`, () => {
    let redis: RedisServer | undefined;
    let upstream: RecordingUpstream;
    let gw: TestGateway;

    const ai = async (token: string) => {
      const res = await fetch(`${gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as any).balances[0] as Record<string, number>;
    };
    const grant = (id: string, microUSD: number) => gw.admin('POST', `/principals/${encodeURIComponent(id)}/credits`, { microUSD });
    const receipt = async (id: string) => (await gw.admin('GET', `/receipts/${id}`)).body as Record<string, any>;
    const paidPrincipal = async (microUSD: number) => {
      const p = await gw.principal();
      expect((await grant(p.id, microUSD)).status).to.equal(201);
      return p;
    };

    before(async () => {
      upstream = await startRecordingUpstream();
      if (kind === 'redis') redis = await startRedisServer();
      gw = await startTestGateway({ root: smallLimitsRoot(0), upstreamUrl: upstream.baseUrl, ...(redis ? { redisUrl: redis.url } : {}) });
    });
    after(async () => {
      await gw.close();
      await upstream.stop();
      await redis?.stop();
    });
    beforeEach(() => upstream.reset());

    for (const maxTokens of [2048, 32768]) {
      it(`charges 1000 prompt (400 cached) + 2000 completion tokens 9,630 micro-USD with max_tokens ${maxTokens}`, async () => {
        const p = await paidPrincipal(1_000_000);
        await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 1000, cached_tokens: 400, completion_tokens: 2000 } });
        const res = await gw.chat(p.token, { model: 'shared-general-a', max_tokens: maxTokens, messages: [{ role: 'user', content: 'price this' }] });
        expect(res.status).to.equal(200);
        // 600 x 0.9 + 400 x 0.225 + 2000 x 4.5 = 540 + 90 + 9,000
        expect(res.body).to.include({ billing: 'paid', chargedMicroUSD: 9630 });
        expect(await receipt(res.body.receiptId)).to.include({ chargedMicroUSD: 9630, pricedMicroUSD: 9630 });
        expect(await ai(p.token)).to.deep.include({ spentMicroUSD: 9630, reservedMicroUSD: 0, availableMicroUSD: 1_000_000 - 9630 });
      });
    }

    for (const [script, text, tokens] of [
      ['CJK', '漏洞'.repeat(150), 300], // 900 bytes of UTF-8: a tokenizer may count one token a character or more
      ['emoji', '🔐🛡️'.repeat(100), 500], // 4 and 3+3 bytes each: several tokens each
    ] as const) {
      it(`charges ${script} text what the upstream reports, not a share of it`, async () => {
        const p = await paidPrincipal(1_000_000);
        await upstream.behave({ mode: 'echo', usage: { prompt_tokens: tokens, completion_tokens: 10 } });
        const res = await gw.chat(p.token, { model: 'shared-general-a', max_tokens: 10, messages: [{ role: 'user', content: text }] });
        expect(res.status).to.equal(200);
        const priced = Math.ceil((tokens * 900_000 + 10 * 4_500_000) / 1_000_000);
        expect(res.body.chargedMicroUSD).to.equal(priced);
        const r = await receipt(res.body.receiptId);
        // The hold was the true bound: the UTF-8 bytes + 8 for the message, + max_tokens.
        expect(r['reservedTokens']).to.equal(Buffer.byteLength(text) + 8 + 10);
        expect(r).to.include({ chargedMicroUSD: priced, pricedMicroUSD: priced });
        expect(r).not.to.have.property('note');
      });
    }

    it('holds every byte the upstream receives: a string tool_choice, the tool-call ids the gateway sends, and an allowance per tool call', async () => {
      const p = await paidPrincipal(10_000_000);
      await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 1, completion_tokens: 1 } });
      // 100 tool calls in one assistant turn and their 100 answers: the upstream gets call_0..call_99 twice each.
      const calls = Array.from({ length: 100 }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name: 'f', arguments: '{}' } }));
      const res = await gw.chat(p.token, {
        model: 'shared-general-a',
        max_tokens: 10,
        tools: [{ type: 'function', function: { name: 'f' } }],
        tool_choice: 'required',
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: calls },
          ...calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: '' })),
          { role: 'user', content: 'and now?' },
        ],
      });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      // The bound, recomputed from what the upstream received: bytes of every forwarded string, the tools and
      // the tool choice as JSON, 8 tokens a message and 16 a tool call, + max_tokens.
      const sent = (await upstream.requests())[0]!.body as any;
      const b = (v: unknown) => (typeof v === 'string' ? Buffer.byteLength(v) : 0);
      let bound = Buffer.byteLength(JSON.stringify(sent.tools)) + Buffer.byteLength(JSON.stringify(sent.tool_choice)) + sent.max_tokens;
      for (const m of sent.messages) {
        bound += 8 + b(m.content) + b(m.name) + b(m.refusal) + b(m.tool_call_id);
        for (const c of m.tool_calls ?? []) bound += 16 + b(c.id) + b(c.function.name) + b(c.function.arguments);
      }
      expect(sent.tool_choice).to.equal('required');
      expect(sent.messages[2].tool_call_id).to.equal('call_0');
      expect((await receipt(res.body.receiptId))['reservedTokens']).to.equal(bound);
    });

    it('charges usage above the bound in full, takes the balance below zero, notes it, and refuses the next paid call 402 until topped up', async () => {
      const p = await paidPrincipal(1000);
      await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 100_000, completion_tokens: 10 } });
      const first = await gw.chat(p.token, { model: 'shared-general-a', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      expect(first.status).to.equal(200);
      const charged = 100_000 * 0.9 + 10 * 4.5; // 90,045
      expect(first.body).to.include({ billing: 'paid', chargedMicroUSD: charged });
      const r = await receipt(first.body.receiptId);
      // Held: (2 bytes + 8) x 0.9 + 10 x 4.5 = 54; charged all that was reported.
      expect(r).to.include({ chargedMicroUSD: charged, pricedMicroUSD: charged, reservedMicroUSD: 54, note: 'above-reservation' });
      expect(await ai(p.token)).to.deep.equal({
        scope: 'ai',
        grantedMicroUSD: 1000,
        spentMicroUSD: charged,
        reservedMicroUSD: 0,
        availableMicroUSD: 1000 - charged,
      });

      await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 1, completion_tokens: 1 } });
      const refused = await gw.chat(p.token, { model: 'shared-general-a', max_tokens: 10, messages: [{ role: 'user', content: 'again' }] });
      expect(refused.status).to.equal(402);
      expect(refused.body.error.code).to.equal('insufficient-credits');
      expect(refused.body.error.message).to.include(`${charged - 1000} micro-USD below zero`);
      expect(await upstream.requests()).to.have.length(1);

      expect((await grant(p.id, 100_000)).status).to.equal(201);
      const after = await gw.chat(p.token, { model: 'shared-general-a', max_tokens: 10, messages: [{ role: 'user', content: 'again' }] });
      expect(after.status).to.equal(200);
      expect(after.body).to.include({ billing: 'paid', chargedMicroUSD: 6 }); // 0.9 + 4.5, rounded up once
      expect((await ai(p.token))['spentMicroUSD']).to.equal(charged + 6);
    });
  });
}
