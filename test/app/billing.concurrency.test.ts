/**
 * Money under a burst: 220 distinct paid calls released at once by a barrier against credits that cover
 * exactly N of them, on one gateway and then on two gateways sharing one Redis. The upstream reports the
 * worst case as usage, so each admitted call costs exactly what it held (414 micro-USD) and no admitted
 * call frees room for another: at most N — here exactly N — are admitted. Throughout, sampled balances are
 * never negative; afterwards nothing is held and the receipts' charges sum to what was spent.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { body, smallLimitsRoot, WORST } from '../helpers/billing.js';

const BURST = 220;
const COVERED = 40;

interface Outcome {
  statuses: number[];
  codes: string[];
  lowestAvailable: number;
  samples: number;
}

/** Fires `BURST` calls at once across the gateways, sampling the balance while they run. */
async function burst(gateways: TestGateway[], token: string, principal: string): Promise<Outcome> {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const calls = Array.from({ length: BURST }, async (_, i) => {
    const gw = gateways[i % gateways.length]!;
    const b = body();
    await gate;
    return gw.chat(token, b);
  });
  let running = true;
  let lowestAvailable = Infinity;
  let samples = 0;
  const sampler = (async () => {
    while (running) {
      const s = (await gateways[0]!.admin('GET', `/principals/${encodeURIComponent(principal)}/billing`)).body.balances[0];
      expect(s.availableMicroUSD).to.equal(s.grantedMicroUSD - s.spentMicroUSD - s.reservedMicroUSD);
      lowestAvailable = Math.min(lowestAvailable, s.availableMicroUSD);
      samples += 1;
    }
  })();
  open();
  const results = await Promise.all(calls);
  running = false;
  await sampler;
  return { statuses: results.map((r) => r.status), codes: results.map((r) => (r.status === 200 ? 'ok' : r.body?.error?.code)), lowestAvailable, samples };
}

async function settledBooks(gw: TestGateway, principal: string, day: string) {
  const balance = (await gw.admin('GET', `/principals/${encodeURIComponent(principal)}/billing`)).body.balances[0];
  const receipts = (await gw.admin('GET', `/principals/${encodeURIComponent(principal)}/receipts?day=${day}`)).body.data as Array<Record<string, any>>;
  return { balance, receipts, charged: receipts.reduce((n, r) => n + (r['chargedMicroUSD'] as number), 0) };
}

describe('billing under concurrency (barrier bursts, real redis)', function () {
  this.timeout(60_000);
  let w: World;
  const now = Date.parse('2030-03-14T12:00:00.000Z');

  before(async () => {
    w = await startWorld({ root: smallLimitsRoot(0), now: () => now });
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
  });
  after(() => w.stop());

  async function check(gateways: TestGateway[]): Promise<void> {
    const p = await w.gw.principal();
    await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: COVERED * WORST });
    const out = await burst(gateways, p.token, p.id);
    const admitted = out.statuses.filter((s) => s === 200).length;
    expect(admitted).to.equal(COVERED);
    expect(out.codes.filter((c) => c !== 'ok'))
      .to.have.length(BURST - COVERED)
      .and.satisfy((cs: string[]) => cs.every((c) => c === 'insufficient-credits'));
    expect(out.lowestAvailable).to.be.at.least(0);
    expect(out.samples).to.be.greaterThan(0);
    const books = await settledBooks(w.gw, p.id, '2030-03-14');
    expect(books.balance).to.deep.equal({
      scope: 'ai',
      grantedMicroUSD: COVERED * WORST,
      spentMicroUSD: COVERED * WORST,
      reservedMicroUSD: 0,
      availableMicroUSD: 0,
    });
    expect(books.receipts).to.have.length(BURST);
    expect(books.charged).to.equal(books.balance.spentMicroUSD);
    expect(books.receipts.filter((r) => r['outcome'] === 'answered')).to.have.length(COVERED);
  }

  it(`admits exactly ${COVERED} of ${BURST} simultaneous paid calls on one gateway`, async () => {
    await check([w.gw]);
  });

  it(`admits exactly ${COVERED} of ${BURST} simultaneous paid calls across two gateways sharing one Redis`, async () => {
    const second = await startTestGateway({ upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url, root: w.gw.root, now: () => now });
    try {
      await check([w.gw, second]);
    } finally {
      await second.close();
    }
  });
});
