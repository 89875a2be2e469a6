/**
 * One contract for both token-usage stores (memory, and Redis on a real redis-server): the last use only
 * moves forward, and a lookup answers in the order asked, null for never.
 */
import { expect } from 'chai';
import { MemoryTokenUsageStore } from '../../src/token-usage/memory-store.js';
import { RedisTokenUsageStore } from '../../src/token-usage/redis-store.js';
import { UsageRecorder, type TokenUsageStore } from '../../src/token-usage/store.js';
import { onRedis } from '../helpers/redis-contract.js';

function contract(name: string, make: () => Promise<TokenUsageStore & { close(): Promise<void> }>) {
  describe(`token usage store contract: ${name}`, () => {
    let s: TokenUsageStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('keeps the latest use, whatever order uses are reported in', async () => {
      await s.seen('a', '2026-11-23T10:00:00.000Z');
      await s.seen('a', '2026-11-23T09:00:00.000Z');
      await s.seen('b', '2026-11-23T08:00:00.000Z');
      expect(await s.lastUsed(['b', 'never', 'a'])).to.deep.equal(['2026-11-23T08:00:00.000Z', null, '2026-11-23T10:00:00.000Z']);
      expect(await s.lastUsed([])).to.deep.equal([]);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryTokenUsageStore(), { close: async () => {} }));

onRedis('token usage store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisTokenUsageStore(store), { close: () => store.close() });
  }),
);

describe('usage recorder', () => {
  it('reports a token at most once a minute, and again after', async () => {
    const store = new MemoryTokenUsageStore();
    const r = new UsageRecorder(store, 60_000);
    const t0 = Date.parse('2026-11-23T10:00:00.000Z');
    r.used('a', t0);
    r.used('a', t0 + 59_999);
    await new Promise((res) => setImmediate(res));
    expect(await store.lastUsed(['a'])).to.deep.equal(['2026-11-23T10:00:00.000Z']);
    r.used('a', t0 + 60_000);
    await new Promise((res) => setImmediate(res));
    expect(await store.lastUsed(['a'])).to.deep.equal(['2026-11-23T10:01:00.000Z']);
  });
});
