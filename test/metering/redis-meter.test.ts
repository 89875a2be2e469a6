/**
 * What only the Redis meter can show, against a private redis-server: reserve and settle are one command
 * each on the wire, a settlement whose reply was lost and is retried charges once, and settled money and
 * receipts survive a SIGKILL of Redis (appendfsync always). The shared rules are in `contract.test.ts`.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { RedisStore } from '../../src/store/redis.js';
import { StoreUnavailable } from '../../src/store/errors.js';
import { RedisMeter } from '../../src/metering/redis-meter.js';
import type { Reservation, ReserveRequest } from '../../src/metering/meter.js';
import { receiptLogFor as logFor } from '../../src/app/wire.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/wait.js';

const PID = 'did:web:portcullis.test:tenant:alice';
const RATES = { inputPerMTok: 900_000, cachedInputPerMTok: 225_000, outputPerMTok: 4_500_000 };
let seq = 0;
const paid = (): ReserveRequest => ({
  callId: `rc-${++seq}`,
  principalId: PID,
  model: 'shared-general-a',
  task: 'code-review',
  estimatedTokens: 100,
  maxOutputTokens: 90,
  rates: RATES,
  ttlMs: 3_600_000,
  limits: { free: { perDay: 0, unit: 'requests' }, rung: null },
});
const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20, cached_tokens: 0 }; // 54 micro-USD
const receipt = (r: Reservation) => (s: { billing: string; chargedMicroUSD: number }) => ({
  id: `rcpt_${r.callId}`,
  principalId: r.principalId,
  createdAt: new Date().toISOString(),
  outcome: 'answered',
  billing: s.billing,
  chargedMicroUSD: s.chargedMicroUSD,
});

async function untilAnswers(store: RedisStore): Promise<void> {
  await until(async () => (await store.ping(), true), { what: 'the store to answer a PING' });
}

describe('redis meter', () => {
  let redis: RedisServer;
  let store: RedisStore;
  let meter: RedisMeter;
  let n = 0;

  before(async () => {
    redis = await startRedisServer();
  });
  after(() => redis.stop());
  beforeEach(async () => {
    // A deadline no busy machine reaches (every write waits for its fsync: appendfsync always); the one
    // test that needs a deadline to pass opens its own store with a short one.
    store = await RedisStore.connect({ url: redis.url, keyPrefix: `rm${n++}:`, commandTimeoutMs: 10_000 });
    meter = new RedisMeter(store, {});
    await meter.grant({ operationId: `g-${n}`, principalId: PID, kind: 'credits', microUSD: 10_000, source: 'test' });
  });
  afterEach(async () => {
    await meter.close();
    await store.close();
  });

  it('reserves and settles with one command each on the wire (one EVALSHA)', async () => {
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    try {
      const evalshas = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await spy.info('commandstats'))?.[1] ?? 0);
      const r0 = await meter.reserve(paid()); // loads the script cache
      await meter.settle(r0, { usage, chargeable: true }, receipt(r0));
      const before = await evalshas();
      const r = await meter.reserve(paid());
      expect(await evalshas()).to.equal(before + 1);
      await meter.settle(r, { usage, chargeable: true }, receipt(r));
      expect(await evalshas()).to.equal(before + 2);
    } finally {
      await spy.quit();
    }
  });

  it("gives the day's usage key its expiry when a hold creates it, and keeps it through later holds and settlements", async () => {
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    try {
      const free = (): ReserveRequest => ({ ...paid(), limits: { free: { perDay: 5, unit: 'requests' }, rung: null } });
      const useKey = `${store.keyPrefix}use:${meter.today()}:${PID}`;
      const first = await meter.reserve(free());
      expect(first.billing).to.equal('free');
      const ttl = await spy.ttl(useKey);
      // Two days past the end of today (UTC), in seconds: more than two days, at most three.
      expect(ttl)
        .to.be.greaterThan(2 * 86_400)
        .and.at.most(3 * 86_400);
      const second = await meter.reserve(free());
      await meter.settle(first, { usage, chargeable: true }, receipt(first));
      await meter.settle(second, { usage, chargeable: true }, receipt(second));
      expect(await spy.hmGet(useKey, ['freeUsed', 'freeHeld'])).to.deep.equal(['2', '0']);
      const after = await spy.ttl(useKey);
      expect(after)
        .to.be.greaterThan(2 * 86_400)
        .and.at.most(ttl);
    } finally {
      await spy.quit();
    }
  });

  it("answers a repeated free reserve and settle as the first, counting once and leaving the usage key's expiry where the first set it", async () => {
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    try {
      const req: ReserveRequest = { ...paid(), limits: { free: { perDay: 5, unit: 'requests' }, rung: null } };
      const useKey = `${store.keyPrefix}use:${meter.today()}:${PID}`;
      const first = await meter.reserve(req);
      const ttl = await spy.pTTL(useKey);
      const again = await meter.reserve(req);
      expect(again).to.deep.equal(first);
      expect(await meter.usage(PID, first.day)).to.include({ freeUsed: 0, freeHeld: 1 });
      const settled = await meter.settle(first, { usage, chargeable: true }, receipt(first));
      const repeated = await meter.settle(again, { usage, chargeable: true }, receipt(again));
      expect(repeated).to.deep.include({ billing: settled.billing, chargedMicroUSD: settled.chargedMicroUSD });
      expect(await meter.usage(PID, first.day)).to.include({ freeUsed: 1, freeHeld: 0 });
      expect((await logFor(store).pending(10)).size).to.equal(1);
      expect(await spy.zCard(`${store.keyPrefix}rd:${first.day}:${PID}`)).to.equal(1);
      // Set once, by the reserve that made the key: no later write moved it, none dropped it.
      expect(await spy.pTTL(useKey))
        .to.be.greaterThan(0)
        .and.at.most(ttl);
      expect((await meter.status(PID)).balances[0]).to.include({ spentMicroUSD: 0, reservedMicroUSD: 0 });
    } finally {
      await spy.quit();
    }
  });

  it("releases a crashed free call's hold in the sweep, and its late settlement counts nothing and keeps the usage key's expiry", async () => {
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    let t = Date.parse('2026-03-01T23:59:59.000Z');
    const clocked = new RedisMeter(store, { now: () => t });
    try {
      const req = (): ReserveRequest => ({ ...paid(), ttlMs: 1000, limits: { free: { perDay: 5, unit: 'requests' }, rung: null } });
      const crashed = await clocked.reserve(req());
      expect(crashed.day).to.equal('2026-03-01');
      const useKey = `${store.keyPrefix}use:2026-03-01:${PID}`;
      expect(await spy.pTTL(useKey)).to.be.greaterThan(0);
      t += 5000; // past the hold's expiry, and into the next UTC day
      expect(await clocked.sweep()).to.equal(1);
      expect(await clocked.usage(PID, '2026-03-01')).to.include({ freeUsed: 0, freeHeld: 0 });
      const next = await clocked.reserve(req());
      expect(next.day).to.equal('2026-03-02');
      expect(await spy.pTTL(`${store.keyPrefix}use:2026-03-02:${PID}`)).to.be.greaterThan(0);
      const late = await clocked.settle(crashed, { usage, chargeable: true }, receipt(crashed));
      expect(late).to.include({ chargedMicroUSD: 0, note: 'reservation-expired' });
      expect(await clocked.usage(PID, '2026-03-01')).to.include({ freeUsed: 0, freeHeld: 0 });
      expect(await spy.pTTL(useKey)).to.be.greaterThan(0);
      await clocked.settle(next, { usage, chargeable: true }, receipt(next));
      expect(await clocked.usage(PID, '2026-03-02')).to.include({ freeUsed: 1, freeHeld: 0 });
      expect((await clocked.status(PID)).balances[0]).to.include({ spentMicroUSD: 0, reservedMicroUSD: 0 });
    } finally {
      await clocked.close();
      await spy.quit();
    }
  });

  it("answers a reserve repeated after midnight with the first one's day, so its settlement counts on that day's usage key and makes no key without an expiry", async () => {
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    let t = Date.parse('2026-03-01T23:59:59.500Z');
    const clocked = new RedisMeter(store, { now: () => t });
    try {
      const req: ReserveRequest = { ...paid(), limits: { free: { perDay: 5, unit: 'requests' }, rung: null } };
      const first = await clocked.reserve(req);
      t += 1000; // the reply was lost; the call's retry reaches the meter in the next UTC day
      const again = await clocked.reserve(req);
      expect(again).to.deep.equal(first);
      await clocked.settle(again, { usage, chargeable: true }, receipt(again));
      expect(await clocked.usage(PID, '2026-03-01')).to.include({ freeUsed: 1, freeHeld: 0 });
      expect(await spy.exists(`${store.keyPrefix}use:2026-03-02:${PID}`)).to.equal(0);
      for (const k of await spy.keys(`${store.keyPrefix}use:*`)) expect(await spy.pTTL(k), k).to.be.greaterThan(0);
    } finally {
      await clocked.close();
      await spy.quit();
    }
  });

  it('charges once when a settlement reply is lost (Redis frozen past the deadline) and the settlement is retried', async () => {
    const r = await meter.reserve(paid());
    const hasty = await RedisStore.connect({ url: redis.url, keyPrefix: store.keyPrefix, commandTimeoutMs: 300 });
    let lost: unknown;
    try {
      await redis.kill('SIGSTOP');
      await new RedisMeter(hasty, {}).settle(r, { usage, chargeable: true }, receipt(r));
    } catch (err) {
      lost = err;
    } finally {
      await redis.kill('SIGCONT');
      await hasty.close();
    }
    expect(lost).to.be.instanceOf(StoreUnavailable);
    await untilAnswers(store);
    // The frozen server still had the script in its socket buffer and ran it once it thawed: the charge
    // and the receipt are there, though the gateway never heard so.
    expect(await store.getReceipt(`rcpt_${r.callId}`)).to.include({ chargedMicroUSD: 54 });
    const retried = await meter.settle(r, { usage, chargeable: true }, receipt(r));
    expect(retried.chargedMicroUSD).to.equal(54);
    // ... and its one log leaf: the retry sequenced nothing more.
    expect((await logFor(store).pending(10)).size).to.equal(1);
    expect((await meter.status(PID)).balances[0]).to.deep.equal({
      scope: 'ai',
      grantedMicroUSD: 10_000,
      spentMicroUSD: 54,
      reservedMicroUSD: 0,
      availableMicroUSD: 10_000 - 54,
    });
  });

  it('keeps settled money, holds and receipts through SIGKILL and restart', async () => {
    const settled = await meter.reserve(paid());
    await meter.settle(settled, { usage, chargeable: true }, receipt(settled));
    const open = await meter.reserve(paid());
    await redis.kill('SIGKILL');
    await redis.restart();
    await untilAnswers(store);
    expect((await meter.status(PID)).balances[0]).to.include({ spentMicroUSD: 54, reservedMicroUSD: open.reservedMicroUSD });
    expect(await store.getReceipt(`rcpt_${settled.callId}`)).to.include({ chargedMicroUSD: 54, logIndex: 0 });
    expect((await logFor(store).pending(10)).size).to.equal(1);
    await meter.settle(open, { usage, chargeable: true }, receipt(open));
    expect((await meter.status(PID)).balances[0]).to.include({ spentMicroUSD: 108, reservedMicroUSD: 0 });
  });
});
