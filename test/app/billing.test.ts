/**
 * Metering as a client and an operator see it, through a real gateway on a real Redis and the recording
 * upstream, with small limits (a config edit in a temp root) and an injected clock:
 *   free allowance 3 requests/day; rung card 250 tokens/day, ceiling 450. Every call here asks for 30
 *   characters of input (10 tokens, estimated) and max_tokens 90: a worst case of 100 tokens, held at
 *   10 x 0.9 + 90 x 4.5 = 414 micro-USD when paid.
 * Free then paid, the allowance exhausted, credits short, the rung's allowance and ceiling, a UTC midnight,
 * failures that charge nothing, grants, and receipts (own only, signed, listed per day) — exact numbers.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { body, smallLimitsRoot, WORST } from '../helpers/billing.js';
import { publicKeyFromPem } from '../../src/receipts/key.js';
import { verifyReceiptBundle } from '../../src/receipts/verify.js';
import { provenReceipt } from '../helpers/receipts.js';
import { until } from '../helpers/wait.js';

describe('billing and metering (real gateway, redis and upstream)', () => {
  let w: World;
  let now = Date.parse('2030-03-14T12:00:00.000Z');
  const day = () => new Date(now).toISOString().slice(0, 10);

  const status = async (token: string) => {
    const res = await fetch(`${w.gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ai = async (token: string) => (await status(token)).body.balances[0];
  const grant = (id: string, microUSD: number, operationId?: string) =>
    w.gw.admin('POST', `/principals/${encodeURIComponent(id)}/credits`, { microUSD, ...(operationId ? { operationId } : {}) });
  const usageOf = async (id: string, d = day()) => (await w.gw.admin('GET', `/principals/${encodeURIComponent(id)}/billing?day=${d}`)).body.usage;
  const receipts = async (id: string, d = day()) => (await w.gw.admin('GET', `/principals/${encodeURIComponent(id)}/receipts?day=${d}`)).body.data as any[];

  before(async () => {
    w = await startWorld({ root: smallLimitsRoot(), now: () => now });
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  it('GET /v1/billing/status answers {status, plan, balances} for the PAT principal, and 401 without a PAT', async () => {
    const p = await w.gw.principal();
    expect(await status(p.token)).to.deep.equal({
      status: 200,
      body: { status: 'connected', plan: null, balances: [{ scope: 'ai', grantedMicroUSD: 0, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 0 }] },
    });
    const anon = await fetch(`${w.gw.apiUrl}/v1/billing/status`);
    expect(anon.status).to.equal(401);
    expect(((await anon.json()) as any).error.code).to.equal('unauthenticated');
  });

  it('free inside the allowance, 429 past it without credits, then paid at the actual usage, then 402', async () => {
    const p = await w.gw.principal();
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 10 } });
    for (let i = 0; i < 3; i++) {
      const r = await w.gw.chat(p.token, body());
      expect(r.status).to.equal(200);
      expect(r.body).to.include({ billing: 'free', chargedMicroUSD: 0 });
    }
    expect(await usageOf(p.id)).to.deep.include({ freeUsed: 3, freeHeld: 0 });

    const exhausted = await w.gw.chat(p.token, body());
    expect(exhausted.status).to.equal(429);
    expect(exhausted.body.error.code).to.equal('daily-allowance-exhausted');
    expect(exhausted.body.error.message).to.contain('free allowance of 3 requests per day is used (3 on 2030-03-14)');

    expect((await grant(p.id, 500, 'invoice-1')).status).to.equal(201);
    const again = await grant(p.id, 500, 'invoice-1');
    expect(again.status).to.equal(200);
    expect(again.body.applied).to.equal(false);
    expect(await ai(p.token)).to.deep.equal({ scope: 'ai', grantedMicroUSD: 500, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 500 });

    // 10 x 0.9 + 10 x 4.5 = 54 micro-USD, after holding 414
    const paid = await w.gw.chat(p.token, body());
    expect(paid.status).to.equal(200);
    expect(paid.body).to.include({ billing: 'paid', chargedMicroUSD: 54 });
    expect((await w.gw.chat(p.token, body())).body).to.include({ billing: 'paid', chargedMicroUSD: 54 });
    expect(await ai(p.token)).to.deep.equal({ scope: 'ai', grantedMicroUSD: 500, spentMicroUSD: 108, reservedMicroUSD: 0, availableMicroUSD: 392 });

    const short = await w.gw.chat(p.token, body());
    expect(short.status).to.equal(402);
    expect(short.body.error.code).to.equal('insufficient-credits');
    expect(short.body.error.message).to.contain(`may cost ${WORST} micro-USD`).and.contain('392 micro-USD of credits are available');
    expect(await ai(p.token)).to.deep.include({ spentMicroUSD: 108, reservedMicroUSD: 0, availableMicroUSD: 392 });

    // Every call left a receipt, listed under the day; the charges sum to what was spent.
    const list = await receipts(p.id);
    expect(list.map((r) => [r.outcome, r.billing, r.chargedMicroUSD, r.error?.code ?? null])).to.deep.equal([
      ['answered', 'free', 0, null],
      ['answered', 'free', 0, null],
      ['answered', 'free', 0, null],
      ['refused', null, 0, 'daily-allowance-exhausted'],
      ['answered', 'paid', 54, null],
      ['answered', 'paid', 54, null],
      ['refused', null, 0, 'insufficient-credits'],
    ]);
    expect(list[4]).to.include({ reservedMicroUSD: WORST, reservedTokens: 100, countedTokens: 20, pricedMicroUSD: 54 });
    expect(list[4].usage).to.deep.equal({ prompt_tokens: 10, completion_tokens: 10, total_tokens: 20, cached_tokens: 0 });
  });

  it('red team: free below tokens/day, paid only between tokens/day and the ceiling, 429 past the ceiling', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } }); // 100 tokens, 414 micro-USD
    const red = () => w.gw.chat(p.token, body('red-whitehacker-a'));
    expect((await red()).body).to.include({ billing: 'free', chargedMicroUSD: 0 }); // 0 + 100 <= 250
    expect((await red()).body).to.include({ billing: 'free', chargedMicroUSD: 0 }); // 100 + 100 <= 250
    const over = await red(); // 200 + 100 > 250, the free allowance (2 of 3) notwithstanding: paid only
    expect(over.status).to.equal(429);
    expect(over.body.error.code).to.equal('daily-allowance-exhausted');
    expect(over.body.error.message).to.contain('allowance of 250 tokens per day at rung card is used (200 used or held on 2030-03-14, this call may use 100)');
    await grant(p.id, 10_000);
    expect((await red()).body).to.include({ billing: 'paid', chargedMicroUSD: 414 }); // 300 <= 450
    expect((await red()).body).to.include({ billing: 'paid', chargedMicroUSD: 414 }); // 400 <= 450
    const ceiling = await red();
    expect(ceiling.status).to.equal(429);
    expect(ceiling.body.error.code).to.equal('daily-ceiling-reached');
    expect(ceiling.body.error.message).to.contain('daily ceiling of 450 tokens at rung card would be passed: 400 used or held on 2030-03-14');
    expect(await usageOf(p.id)).to.deep.equal({ day: '2030-03-14', freeUsed: 2, freeHeld: 0, rungTokensUsed: 400, rungTokensHeld: 0 });
    expect(await ai(p.token)).to.deep.equal({ scope: 'ai', grantedMicroUSD: 10_000, spentMicroUSD: 828, reservedMicroUSD: 0, availableMicroUSD: 9172 });
    // Blue-team calls still go: they count toward the free allowance and credits only.
    expect((await w.gw.chat(p.token, body())).body).to.include({ billing: 'free' });
  });

  it('starts a fresh day at 00:00 UTC (injected clock): allowance and rung tokens reset', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
    for (let i = 0; i < 3; i++) expect((await w.gw.chat(p.token, body())).body.billing).to.equal('free');
    expect((await w.gw.chat(p.token, body())).status).to.equal(429);
    const saved = now;
    now = Date.parse('2030-03-15T00:00:00.000Z');
    try {
      const next = await w.gw.chat(p.token, body('red-whitehacker-a'));
      expect(next.status).to.equal(200);
      expect(next.body).to.include({ billing: 'free', chargedMicroUSD: 0 });
      expect(await usageOf(p.id, '2030-03-15')).to.deep.equal({ day: '2030-03-15', freeUsed: 1, freeHeld: 0, rungTokensUsed: 100, rungTokensHeld: 0 });
      expect(await usageOf(p.id, '2030-03-14')).to.deep.include({ freeUsed: 3 });
      const [r] = await receipts(p.id, '2030-03-15');
      expect(r).to.include({ day: '2030-03-15', id: next.body.receiptId });
    } finally {
      now = saved;
    }
  });

  it('charges nothing for an upstream failure or an echo mismatch, and gives the free unit back', async () => {
    const p = await w.gw.principal();
    await grant(p.id, 1000);
    await w.upstream.behave({ mode: 'status', status: 500 });
    const failed = await w.gw.chat(p.token, body());
    expect(failed.status).to.equal(502);
    await w.upstream.behave({ mode: 'wrong-model', usage: { prompt_tokens: 10, completion_tokens: 10 } });
    const mismatch = await w.gw.chat(p.token, body());
    expect(mismatch.status).to.equal(502);
    expect(mismatch.body.error.code).to.equal('upstream-model-mismatch');
    expect(await usageOf(p.id)).to.deep.include({ freeUsed: 0, freeHeld: 0 });
    expect(await ai(p.token)).to.deep.equal({ scope: 'ai', grantedMicroUSD: 1000, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 1000 });
    const [a, b] = await receipts(p.id);
    expect(a).to.include({ outcome: 'failed', chargedMicroUSD: 0, countedTokens: 0 });
    expect(a.error.code).to.equal('upstream-error');
    expect(b).to.include({ outcome: 'failed', chargedMicroUSD: 0, countedTokens: 0 });
    expect(b.error.code).to.equal('upstream-model-mismatch');
    expect(b.usage).to.include({ prompt_tokens: 10, completion_tokens: 10 }); // recorded, not charged
  });

  it('settles the job of a client that went away at its usage once it ends, releasing the rest', async () => {
    const p = await w.gw.principal();
    await grant(p.id, 1000);
    for (let i = 0; i < 3; i++) await w.gw.chat(p.token, body()); // use the free allowance: the next is paid
    await w.upstream.behave({ mode: 'echo', delayMs: 1500 });
    const ac = new AbortController();
    const pending = fetch(`${w.gw.apiUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}` },
      body: JSON.stringify(body()),
      signal: ac.signal,
    }).catch(() => null);
    await until(async () => (await ai(p.token)).reservedMicroUSD !== 0, { what: 'the call to reserve' });
    expect((await ai(p.token)).reservedMicroUSD).to.equal(WORST);
    ac.abort();
    await pending;
    // The job is the principal's, not the connection's: it runs to its end and is charged its usage
    // (the recording upstream's 11 prompt + 7 completion tokens: 9.9 + 31.5, rounded up once = 42).
    const bal = await until(
      async () => {
        const b = await ai(p.token);
        return b.reservedMicroUSD === 0 ? b : null;
      },
      { what: 'the detached job to settle' },
    );
    expect(bal).to.deep.equal({ scope: 'ai', grantedMicroUSD: 1000, spentMicroUSD: 42, reservedMicroUSD: 0, availableMicroUSD: 958 });
    const last = (await receipts(p.id)).at(-1);
    expect(last).to.include({ outcome: 'answered', chargedMicroUSD: 42, billing: 'paid' });
  });

  it('serves a principal its own receipt with its inclusion proof, never another principal’s, and keeps no prompt text', async () => {
    const alice = await w.gw.principal();
    const bob = await w.gw.principal();
    // A prompt no receipt field could hold by chance (body()'s own is two characters, often found in a hash).
    const asked = { ...body(), messages: [{ role: 'user', content: 'codeword quokka-vermilion, never to be kept' }] };
    const r = await w.gw.chat(alice.token, asked);
    const get = (token: string) => fetch(`${w.gw.apiUrl}/v1/receipts/${r.body.receiptId}`, { headers: { authorization: `Bearer ${token}` } });
    const own = await get(alice.token);
    expect(own.status).to.equal(200);
    const first = (await own.json()) as any;
    expect(first).to.include({ id: r.body.receiptId, principalId: alice.id, outcome: 'answered', billing: 'free', day: '2030-03-14' });
    expect(first.logIndex).to.be.a('number');
    expect(first).not.to.have.property('signature');
    // Pending at first, covered by a signed checkpoint within about a second.
    const receipt = await provenReceipt(w.gw.apiUrl, alice.token, r.body.receiptId);
    expect(receipt['inclusionProof']).to.be.an('array');
    const key = (await w.gw.admin('GET', '/receipt-key')).body;
    const checked = verifyReceiptBundle(receipt, publicKeyFromPem(key.publicKeyPem));
    expect(checked.ok && checked.logIndex).to.equal(first.logIndex);
    expect(verifyReceiptBundle({ ...receipt, chargedMicroUSD: 1 }, publicKeyFromPem(key.publicKeyPem)).ok).to.equal(false);
    expect(JSON.stringify(receipt)).not.to.contain(asked.messages[0]!.content);
    const other = await get(bob.token);
    expect(other.status).to.equal(404);
    expect(((await other.json()) as any).error.code).to.equal('receipt-not-found');
    expect((await get('pcl_pat_nope')).status).to.equal(401);
  });

  it('sets a plan: its monthly AI credits are granted once per principal, plan and month', async () => {
    const p = await w.gw.principal();
    const first = await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/plan`, { plan: 'pro' });
    expect(first.status).to.equal(201);
    expect(first.body.grant).to.include({ operationId: `plan:${p.id}:pro:2030-03`, kind: 'plan', microUSD: 12_000_000, plan: 'pro' });
    expect((await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/plan`, { plan: 'pro' })).status).to.equal(200);
    expect((await status(p.token)).body).to.deep.equal({
      status: 'connected',
      plan: 'pro',
      balances: [{ scope: 'ai', grantedMicroUSD: 12_000_000, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 12_000_000 }],
    });
    const unknown = await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/plan`, { plan: 'gold' });
    expect(unknown.status).to.equal(400);
    expect(unknown.body.error.code).to.equal('unknown-plan');
    const reused = await grant(p.id, 5, `plan:${p.id}:pro:2030-03`);
    expect(reused.status).to.equal(409);
    expect(reused.body.error.code).to.equal('operation-id-reused');
    expect((await grant('did:web:portcullis.localhost:tenant:nobody', 5)).body.error.code).to.equal('principal-not-found');
    expect((await grant(p.id, 0)).status).to.equal(400);
  });
});
