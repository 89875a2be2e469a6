/**
 * One contract for both rate limiters (memory, and Redis on a real redis-server), on an injected clock: a
 * limit admits exactly its count in a window and refuses the next with a wait that, once waited, admits
 * again; the previous window's hits fade out linearly (no doubling at a window edge); subjects and limit
 * names are counted apart; a refused hit counts nothing; cost 0 only checks. On Redis, every window's key
 * expires.
 */
import { expect } from 'chai';
import { MemoryRateLimiter } from '../../src/ratelimit/memory.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis.js';
import type { RateLimiter } from '../../src/ratelimit/limiter.js';
import { onRedis } from '../helpers/redis-contract.js';
import { createClient } from 'redis';
import { RedisStore } from '../../src/store/redis.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const MIN = 60_000;

function contract(name: string, make: (now: () => number) => Promise<RateLimiter & { close(): Promise<void> }>) {
  describe(`rate limiter contract: ${name}`, () => {
    let t = 0;
    let l: RateLimiter & { close(): Promise<void> };
    beforeEach(async () => {
      t = 10 * MIN; // the start of a window
      l = await make(() => t);
    });
    afterEach(() => l.close());

    it('admits the limit in a window, refuses the next, and admits again after the wait it names', async () => {
      for (let i = 0; i < 5; i++) expect((await l.hit('p', 'alice', 5, MIN)).allowed).to.equal(true);
      const refused = await l.hit('p', 'alice', 5, MIN);
      expect(refused.allowed).to.equal(false);
      expect(refused.retryAfterMs)
        .to.be.greaterThan(0)
        .and.at.most(2 * MIN);
      t += refused.retryAfterMs - 1000;
      expect((await l.hit('p', 'alice', 5, MIN)).allowed, 'a second before the wait').to.equal(false);
      t += 1000;
      expect((await l.hit('p', 'alice', 5, MIN)).allowed, 'once the wait has passed').to.equal(true);
    });

    it('lets the previous window fade out: no doubled burst across a window edge', async () => {
      t += MIN - 1000; // the last second of a window
      for (let i = 0; i < 10; i++) expect((await l.hit('p', 'bob', 10, MIN)).allowed).to.equal(true);
      t += 2000; // just past the edge: the previous 10 still weigh almost fully
      expect((await l.hit('p', 'bob', 10, MIN)).allowed).to.equal(false);
      t += MIN / 2; // half faded: room for about 5
      let admitted = 0;
      for (let i = 0; i < 10; i++) if ((await l.hit('p', 'bob', 10, MIN)).allowed) admitted++;
      expect(admitted).to.be.within(4, 5);
    });

    it('counts subjects and limit names apart, and counts nothing for a refused hit or a cost of 0', async () => {
      expect((await l.hit('p', 'carol', 1, MIN)).allowed).to.equal(true);
      expect((await l.hit('p', 'dave', 1, MIN)).allowed).to.equal(true);
      expect((await l.hit('a', 'carol', 1, MIN)).allowed).to.equal(true);
      for (let i = 0; i < 3; i++) expect((await l.hit('p', 'carol', 1, MIN)).allowed).to.equal(false);
      expect((await l.hit('q', 'erin', 2, MIN, 0)).allowed).to.equal(true);
      expect((await l.hit('q', 'erin', 2, MIN)).allowed).to.equal(true);
      expect((await l.hit('q', 'erin', 2, MIN)).allowed).to.equal(true);
      expect((await l.hit('q', 'erin', 2, MIN, 0)).allowed).to.equal(true, 'a check at the limit with cost 0 passes');
      expect((await l.hit('q', 'erin', 2, MIN)).allowed).to.equal(false);
      // Refused hits did not count: one window later carol's single hit has faded by the elapsed share only.
      t += MIN * 2;
      expect((await l.hit('p', 'carol', 1, MIN)).allowed).to.equal(true);
    });
  });
}

contract('memory', async (now) => Object.assign(new MemoryRateLimiter(now), { close: async () => {} }));

onRedis('rate limiter on redis', (connect) =>
  contract('redis', async (now) => {
    const store = await connect();
    return Object.assign(new RedisRateLimiter(store, now), { close: () => store.close() });
  }),
);

describe('rate limiter on redis: the window keys expire', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedisServer();
  });
  after(() => redis.stop());

  it('gives every window key an expiry of two windows from its first hit, so none is kept for good', async () => {
    const store = await RedisStore.connect({ url: redis.url, keyPrefix: 'rlx:' });
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    try {
      let t = 10 * MIN;
      const l = new RedisRateLimiter(store, () => t);
      for (let i = 0; i < 3; i++) expect((await l.hit('p', 'alice', 100, MIN)).allowed).to.equal(true);
      t += MIN; // the next window: a second key
      for (let i = 0; i < 2; i++) expect((await l.hit('p', 'alice', 100, MIN)).allowed).to.equal(true);
      const keys = await spy.keys('rlx:*');
      expect(keys).to.have.length(2);
      for (const k of keys)
        expect(await spy.pTTL(k))
          .to.be.greaterThan(MIN)
          .and.at.most(2 * MIN);
      expect((await spy.mGet(keys.sort())).map(Number).sort()).to.deep.equal([2, 3]);
    } finally {
      await spy.quit();
      await store.close();
    }
  });

  it('makes no window key for a check (cost 0) or a refused hit, and gives the key its expiry when a hit of cost above 1 makes it', async () => {
    const store = await RedisStore.connect({ url: redis.url, keyPrefix: 'rly:' });
    const spy = createClient({ url: redis.url });
    spy.on('error', () => {});
    await spy.connect();
    try {
      const t = 20 * MIN;
      const l = new RedisRateLimiter(store, () => t);
      expect((await l.hit('p', 'bob', 5, MIN, 0)).allowed).to.equal(true);
      expect((await l.hit('p', 'bob', 5, MIN, 6)).allowed).to.equal(false);
      expect(await spy.keys('rly:*')).to.deep.equal([]);
      expect((await l.hit('p', 'bob', 5, MIN, 3)).allowed).to.equal(true);
      expect((await l.hit('p', 'bob', 5, MIN, 2)).allowed).to.equal(true);
      expect((await l.hit('p', 'bob', 5, MIN, 1)).allowed).to.equal(false);
      const keys = await spy.keys('rly:*');
      expect(keys).to.have.length(1);
      expect(await spy.get(keys[0]!)).to.equal('5');
      expect(await spy.pTTL(keys[0]!))
        .to.be.greaterThan(MIN)
        .and.at.most(2 * MIN);
    } finally {
      await spy.quit();
      await store.close();
    }
  });
});
