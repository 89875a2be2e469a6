/**
 * One contract for both challenge stores (memory, and Redis on a real redis-server): a challenge is taken
 * back once and only once, only under the purpose it was issued for, never after it expired, and of two
 * racing takes exactly one wins.
 */
import { expect } from 'chai';
import { MemoryChallengeStore } from '../../src/challenges/memory-store.js';
import { RedisChallengeStore } from '../../src/challenges/redis-store.js';
import { ChallengeExists, newChallenge, type ChallengeStore } from '../../src/challenges/store.js';
import { onRedis } from '../helpers/redis-contract.js';

/** A clock the test moves by hand, so expiry is shown without waiting. */
function clock(start = Date.parse('2026-03-01T10:00:00.000Z')) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function contract(name: string, make: (now: () => number) => Promise<{ store: ChallengeStore; close(): Promise<void> }>) {
  describe(`challenge store contract: ${name}`, () => {
    let s: ChallengeStore;
    let close: () => Promise<void>;
    let c: ReturnType<typeof clock>;
    beforeEach(async () => {
      c = clock();
      ({ store: s, close } = await make(c.now));
    });
    afterEach(() => close());

    it('answers a challenge once, then forgets it', async () => {
      const ch = newChallenge('siwe', 300_000, c.now());
      await s.put(ch);
      expect(await s.take('siwe', ch.value)).to.deep.equal(ch);
      expect(await s.take('siwe', ch.value)).to.equal(null);
    });

    it('answers null for a nonce it never issued', async () => {
      expect(await s.take('siwe', 'deadbeefdeadbeefdeadbeefdeadbeef')).to.equal(null);
    });

    it('keeps purposes apart: a SIWE nonce is not a CACAO nonce, and the wrong take leaves it in place', async () => {
      const ch = newChallenge('siwe', 300_000, c.now());
      await s.put(ch);
      expect(await s.take('cacao', ch.value)).to.equal(null);
      expect(await s.take('siwe', ch.value)).to.deep.equal(ch);
    });

    it('answers null once the challenge has expired', async () => {
      const ch = newChallenge('siwe', 60_000, c.now());
      await s.put(ch);
      c.advance(60_000);
      expect(await s.take('siwe', ch.value)).to.equal(null);
    });

    it('refuses to issue the same challenge twice', async () => {
      const ch = newChallenge('cacao', 60_000, c.now());
      await s.put(ch);
      let err: unknown;
      try {
        await s.put({ ...ch, expiresAt: new Date(c.now() + 120_000).toISOString() });
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ChallengeExists);
      expect(await s.take('cacao', ch.value)).to.deep.equal(ch);
    });

    it('of many racing takes of one challenge, exactly one gets it', async () => {
      const ch = newChallenge('smart-account', 60_000, c.now());
      await s.put(ch);
      const got = await Promise.all(Array.from({ length: 20 }, () => s.take('smart-account', ch.value)));
      expect(got.filter((g) => g !== null)).to.have.length(1);
    });

    it('issues distinct alphanumeric nonces of at least 8 characters', () => {
      const a = newChallenge('siwe', 1000);
      const b = newChallenge('siwe', 1000);
      expect(a.value).to.match(/^[0-9a-f]{32}$/);
      expect(a.value).to.not.equal(b.value);
    });
  });
}

contract('memory', async (now) => ({ store: new MemoryChallengeStore(now), close: async () => {} }));

onRedis('challenge store on redis-server', (connect) => {
  contract('redis', async (now) => {
    const store = await connect();
    return { store: new RedisChallengeStore(store, now), close: () => store.close() };
  });
});
