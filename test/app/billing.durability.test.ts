/**
 * Money through a Redis crash: with Redis run as the README recommends (appendonly, appendfsync always,
 * noeviction — as the test helper starts it), redis-server is SIGKILLed under a steady load of paid calls
 * and restarted. Afterwards no receipt of a call answered 2xx is missing, nor its leaf in the receipt log
 * (each receipt is exactly one leaf, proven against a signed checkpoint), every balance read satisfies
 * available = granted - spent - reserved and is never negative, and once the reservations orphaned by the
 * outage expire (the injected clock moves past their expiry) nothing stays held and the receipts' charges
 * sum exactly to what was spent.
 */
import { expect } from 'chai';
import { allReceipts, startWorld, type World } from '../helpers/world.js';
import { provenReceipt } from '../helpers/receipts.js';
import { RedisStore } from '../../src/store/redis.js';
import { RedisReceiptLog } from '../../src/receipts/redis-log.js';
import { receiptLeafHash } from '../../src/receipts/canonical.js';
import { publicKeyFromPem } from '../../src/receipts/key.js';
import { verifyReceiptBundle } from '../../src/receipts/verify.js';
import { body, smallLimitsRoot, WORST } from '../helpers/billing.js';
import { until } from '../helpers/wait.js';

describe('billing durability (SIGKILL redis under load)', function () {
  this.timeout(60_000);
  let w: World;
  let now = Date.parse('2030-03-14T12:00:00.000Z');

  before(async () => {
    w = await startWorld({ root: smallLimitsRoot(0), now: () => now });
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
  });
  after(() => w.stop());

  it('loses no receipt of a 2xx call and keeps every balance consistent', async () => {
    const p = await w.gw.principal();
    const granted = 10_000 * WORST;
    await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: granted });
    const billing = async () => {
      const r = await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/billing`);
      return r.status === 200 ? (r.body.balances[0] as Record<string, number>) : null;
    };

    const answered: string[] = [];
    const failures: number[] = [];
    let running = true;
    const worker = async () => {
      while (running) {
        try {
          const r = await w.gw.chat(p.token, body());
          if (r.status === 200) answered.push(r.body.receiptId as string);
          else failures.push(r.status);
        } catch {
          failures.push(0);
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    // Under load (on a busy machine too): some calls answered before the crash.
    await until(() => answered.length >= 4, { what: 'four answered calls under load' });
    const before = answered.length;
    await w.redis.kill('SIGKILL');
    // A call that starts while Redis is down is refused, whatever the workers happened to be doing (calls
    // already past their reservation may bridge the outage by retrying their settlement).
    const during = await w.gw.chat(p.token, body());
    failures.push(during.status);
    // Down until the load has met the outage (a worker's call refused), then back until calls are answered again.
    const refusedSoFar = failures.length;
    await until(() => failures.length > refusedSoFar, { what: "a worker's call refused while Redis is down" });
    await w.redis.restart();
    const answeredAtRestart = answered.length;
    await until(() => answered.length > answeredAtRestart, { what: 'a call answered after the restart' });
    running = false;
    await Promise.all(workers);

    expect(before, 'calls answered before the crash').to.be.greaterThan(0);
    expect(answered.length, 'calls answered after the restart').to.be.greaterThan(before);
    expect(failures.length, 'calls refused while Redis was down').to.be.greaterThan(0);
    expect(new Set(failures)).to.satisfy((s: Set<number>) => [...s].every((code) => code >= 500));

    // Every 2xx call's receipt survived, as answered and charged, and so did its leaf: each is proven
    // against a signed checkpoint of the log.
    const key = publicKeyFromPem((await w.gw.admin('GET', '/receipt-key')).body.publicKeyPem);
    for (const id of answered) {
      const r = await w.gw.admin('GET', `/receipts/${id}`);
      expect(r.status, `receipt ${id}`).to.equal(200);
      expect(r.body).to.include({ outcome: 'answered', billing: 'paid', chargedMicroUSD: WORST });
      const proven = await provenReceipt(w.gw.apiUrl, p.token, id);
      expect(verifyReceiptBundle(proven, key).ok, `leaf of ${id}`).to.equal(true);
    }
    // No receipt without its leaf, nor a leaf without its receipt: the log holds exactly one leaf per
    // stored receipt, at the receipt's index.
    const stored = await allReceipts(w);
    const store = await RedisStore.connect({ url: w.redis.url });
    try {
      const log = new RedisReceiptLog(store);
      const size = (await log.pending(0)).size;
      expect(size).to.equal(stored.length);
      const leaves = await log.nodes(Array.from({ length: size }, (_, index) => ({ level: 0, index })));
      expect(stored.map((r) => r['logIndex']).sort((a, b) => a - b)).to.deep.equal(Array.from({ length: size }, (_, i) => i));
      for (const r of stored) expect(leaves[r['logIndex']], r['id']).to.deep.equal(receiptLeafHash(r));
    } finally {
      await store.close();
    }

    const held = (await billing())!;
    expect(held['availableMicroUSD']).to.equal(held['grantedMicroUSD']! - held['spentMicroUSD']! - held['reservedMicroUSD']!);
    expect(held['availableMicroUSD']).to.be.at.least(0);
    expect(held['grantedMicroUSD']).to.equal(granted);

    // Reservations orphaned by the outage are reclaimed once they expire (bound: jobs.maxRunMs + leaseMs +
    // sweepEveryMs + 60 s after they were made); the clock moves two hours on, still the same UTC day.
    now += 2 * 3_600_000;
    const after = (await billing())!;
    expect(after['reservedMicroUSD']).to.equal(0);
    const receipts = (await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts?day=2030-03-14`)).body.data as Array<Record<string, any>>;
    const charged = receipts.reduce((n, r) => n + (r['chargedMicroUSD'] as number), 0);
    expect(after['spentMicroUSD']).to.equal(charged);
    expect(after['availableMicroUSD']).to.equal(granted - charged);
    expect(charged).to.be.at.least(answered.length * WORST);
  });
});
