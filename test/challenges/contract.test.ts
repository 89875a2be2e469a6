/**
 * One contract for both challenge stores (memory, and Redis on a real redis-server): a challenge is taken
 * once, only before its end on the caller's clock, only under the kind it was issued for, and of racing
 * takes exactly one wins.
 */
import { expect } from 'chai';
import { MemoryChallengeStore } from '../../src/challenges/memory-store.js';
import { RedisChallengeStore } from '../../src/challenges/redis-store.js';
import type { ChallengeStore } from '../../src/challenges/store.js';
import { onRedis } from '../helpers/redis-contract.js';

const T0 = 1_900_000_000_000;

function contract(name: string, make: () => Promise<ChallengeStore & { close(): Promise<void> }>) {
  describe(`challenge store contract: ${name}`, () => {
    let s: ChallengeStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('gives a challenge back once, with its data', async () => {
      expect(await s.put('login', 'abc', { data: { who: 'x' }, expiresAt: T0 + 1000 }, T0)).to.equal(true);
      expect(await s.take('login', 'abc', T0 + 10)).to.deep.equal({ data: { who: 'x' }, expiresAt: T0 + 1000 });
      expect(await s.take('login', 'abc', T0 + 20)).to.equal(null);
    });

    it('refuses a challenge past its end, and it is gone after', async () => {
      await s.put('login', 'abc', { data: {}, expiresAt: T0 + 1000 }, T0);
      expect(await s.take('login', 'abc', T0 + 1000)).to.equal(null);
      expect(await s.take('login', 'abc', T0)).to.equal(null);
    });

    it('keeps kinds apart, and never overwrites a held challenge', async () => {
      await s.put('register', 'abc', { data: { n: 1 }, expiresAt: T0 + 1000 }, T0);
      expect(await s.put('register', 'abc', { data: { n: 2 }, expiresAt: T0 + 1000 }, T0)).to.equal(false);
      expect(await s.take('login', 'abc', T0)).to.equal(null);
      expect((await s.take('register', 'abc', T0))!.data).to.deep.equal({ n: 1 });
    });

    it('of racing takes, exactly one wins', async () => {
      await s.put('login', 'race', { data: {}, expiresAt: T0 + 1000 }, T0);
      const results = await Promise.all(Array.from({ length: 8 }, () => s.take('login', 'race', T0)));
      expect(results.filter((r) => r !== null)).to.have.length(1);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryChallengeStore(), { close: async () => {} }));

onRedis('challenge store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisChallengeStore(store), { close: () => store.close() });
  }),
);
