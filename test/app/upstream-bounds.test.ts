/**
 * What an upstream can make the gateway do: an answer over
 * `limits.upstreamAnswerBytes` is cut off and answered 502 `upstream-answer-too-large` with nothing charged
 * and nothing left held; usage that is not a count of tokens is 502 `upstream-usage-malformed`, the answer
 * withheld and the worst case reserved charged, never 0.
 */
import { expect } from 'chai';
import { allReceipts, startWorld, type World } from '../helpers/world.js';
import { editFile } from '../helpers/gateway.js';
import { body, smallLimitsRoot, WORST } from '../helpers/billing.js';

describe('upstream answer bounds', function () {
  this.timeout(60_000);
  let w: World;

  before(async () => {
    // No free allowance: every call is paid, so a charge shows in the balance.
    const root = smallLimitsRoot(0);
    editFile(root, 'config/gateway.yaml', (t) => t.replace('upstreamAnswerBytes: 8388608', 'upstreamAnswerBytes: 1048576'));
    w = await startWorld({ root });
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  async function paidPrincipal(): Promise<{ id: string; token: string }> {
    const p = await w.gw.principal();
    const g = await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 1_000_000 });
    expect(g.status).to.equal(201);
    return p;
  }
  async function balance(token: string): Promise<{ spentMicroUSD: number; reservedMicroUSD: number }> {
    const res = await fetch(`${w.gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { balances: Array<{ spentMicroUSD: number; reservedMicroUSD: number }> }).balances[0]!;
  }
  async function receiptOf(principalId: string): Promise<Record<string, any>> {
    const [r] = (await allReceipts(w)).filter((x) => x['principalId'] === principalId);
    return r!;
  }

  for (const chunked of [false, true]) {
    it(`answers a 40 MiB answer ${chunked ? 'sent chunked' : 'with its content-length'} 502 upstream-answer-too-large, charging nothing (finding 9)`, async () => {
      const p = await paidPrincipal();
      await w.upstream.behave({ mode: 'huge', hugeBytes: 40 * 1024 * 1024, chunked });
      const res = await w.gw.chat(p.token, body());
      expect(res.status).to.equal(502);
      expect(res.body.error.code).to.equal('upstream-answer-too-large');
      expect(await balance(p.token)).to.include({ spentMicroUSD: 0, reservedMicroUSD: 0 });
      const receipt = await receiptOf(p.id);
      expect(receipt).to.deep.include({ outcome: 'failed', error: { code: 'upstream-answer-too-large' }, chargedMicroUSD: 0 });
    });
  }

  it('still relays an answer under the limit', async () => {
    const p = await paidPrincipal();
    await w.upstream.behave({ mode: 'huge', hugeBytes: 512 * 1024 });
    const res = await w.gw.chat(p.token, body());
    expect(res.status).to.equal(200);
    expect(res.body.choices[0].message.content).to.have.length(512 * 1024);
  });

  const malformed: Array<[string, unknown]> = [
    ['1e18 prompt tokens', { prompt_tokens: 1e18, completion_tokens: 7 }],
    ['fractional tokens', { prompt_tokens: 10.5, completion_tokens: 7 }],
    ['numeric strings', { prompt_tokens: '11', completion_tokens: '7' }],
    ['a count above 2^53', { prompt_tokens: 2 ** 53 + 2, completion_tokens: 7 }],
    ['negative tokens', { prompt_tokens: -5, completion_tokens: 7 }],
    ['no completion_tokens', { prompt_tokens: 11 }],
    ['usage null', null],
    ['cached tokens above the prompt', { prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 50 } }],
  ];
  for (const [what, rawUsage] of malformed) {
    it(`answers usage with ${what} 502 upstream-usage-malformed and charges the worst case (finding 10)`, async () => {
      const p = await paidPrincipal();
      await w.upstream.behave({ mode: 'echo', rawUsage });
      const res = await w.gw.chat(p.token, body());
      expect(res.status).to.equal(502);
      expect(res.body.error.code).to.equal('upstream-usage-malformed');
      expect(JSON.stringify(res.body)).not.to.contain('recorded answer');
      expect(await balance(p.token)).to.include({ spentMicroUSD: WORST, reservedMicroUSD: 0 });
      const receipt = await receiptOf(p.id);
      expect(receipt).to.deep.include({ outcome: 'failed', error: { code: 'upstream-usage-malformed' }, chargedMicroUSD: WORST });
    });
  }

  it('answers an answer without usage 502 upstream-usage-malformed and charges the worst case (finding 10)', async () => {
    const p = await paidPrincipal();
    await w.upstream.behave({ mode: 'echo', noUsage: true });
    const res = await w.gw.chat(p.token, body());
    expect(res.body.error.code).to.equal('upstream-usage-malformed');
    expect(await balance(p.token)).to.include({ spentMicroUSD: WORST, reservedMicroUSD: 0 });
  });

  it('accepts usage without prompt_tokens_details (cached tokens are optional)', async () => {
    const p = await paidPrincipal();
    await w.upstream.behave({ mode: 'echo', rawUsage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    const res = await w.gw.chat(p.token, body());
    expect(res.status).to.equal(200);
    expect(res.body.usage).to.include({ prompt_tokens: 11, completion_tokens: 7 });
  });
});
