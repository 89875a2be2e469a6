/**
 * One contract for both version-history stores (memory, and Redis on a real redis-server): a document
 * version is known by its content hash, keeps the earliest time it went live (racing gateways included),
 * and the history comes back ordered by document, then time.
 */
import { expect } from 'chai';
import { MemoryHistoryStore } from '../../src/secure/memory-history.js';
import { RedisHistoryStore } from '../../src/secure/redis-history.js';
import type { HistoryStore } from '../../src/secure/history.js';
import { onRedis } from '../helpers/redis-contract.js';

const g1 = { document: 'guardrails', version: '2026.1.1', sha256: 'a'.repeat(64) };
const g2 = { document: 'guardrails', version: '2026.2.1', sha256: 'b'.repeat(64) };
const f1 = { document: 'firewall', version: '2026.1.1', sha256: 'c'.repeat(64) };
const T1 = '2026-01-01T00:00:00.000Z';
const T2 = '2026-02-01T00:00:00.000Z';
const T3 = '2026-03-01T00:00:00.000Z';

function contract(name: string, make: () => Promise<HistoryStore & { close(): Promise<void> }>) {
  describe(`version history contract: ${name}`, () => {
    let s: HistoryStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('starts empty, records what went live and returns the whole history, ordered by document then time', async () => {
      expect(await s.list()).to.deep.equal([]);
      expect(await s.record([g1, f1], T1)).to.deep.equal([
        { ...f1, liveSince: T1 },
        { ...g1, liveSince: T1 },
      ]);
      const after = await s.record([g2, f1], T2);
      expect(after).to.deep.equal([
        { ...f1, liveSince: T1 },
        { ...g1, liveSince: T1 },
        { ...g2, liveSince: T2 },
      ]);
      expect(await s.list()).to.deep.equal(after);
    });

    it('keeps the earliest time a content went live: a later record changes nothing, an earlier one wins', async () => {
      await s.record([g1], T2);
      await s.record([g1], T3);
      expect((await s.list())[0]!.liveSince).to.equal(T2);
      await s.record([g1], T1);
      expect((await s.list())[0]!.liveSince).to.equal(T1);
    });

    it('tells contents apart by hash: an edit without a new version string is a new entry', async () => {
      const edited = { ...g1, sha256: 'd'.repeat(64) };
      await s.record([g1], T1);
      await s.record([edited], T2);
      expect((await s.list()).map((e) => [e.version, e.sha256[0], e.liveSince])).to.deep.equal([
        ['2026.1.1', 'a', T1],
        ['2026.1.1', 'd', T2],
      ]);
    });

    it('keeps one entry per content when gateways race to record it', async () => {
      await Promise.all([s.record([g1, f1], T2), s.record([g1, f1], T1), s.record([g1], T3)]);
      expect(await s.list()).to.deep.equal([
        { ...f1, liveSince: T1 },
        { ...g1, liveSince: T1 },
      ]);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryHistoryStore(), { close: async () => {} }));

onRedis('version history on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisHistoryStore(store), { close: () => store.close() });
  }),
);
