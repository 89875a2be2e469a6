/**
 * One contract for both recovery stores (memory, and Redis on a real redis-server): a public key finds its
 * principal until replaced, the one-time secret starts at most one recovery (even racing), one recovery is
 * pending at a time, closing it is final, and a cancel by the owner leaves a notice.
 */
import { expect } from 'chai';
import { MemoryRecoveryStore } from '../../src/recovery/memory-store.js';
import { RedisRecoveryStore } from '../../src/recovery/redis-store.js';
import type { PendingRecovery, RecoveryKey, RecoveryStore } from '../../src/recovery/store.js';
import { onRedis } from '../helpers/redis-contract.js';

const P = 'did:web:x:tenant:a';
const key = (patch: Partial<RecoveryKey> = {}): RecoveryKey => ({
  principalId: P,
  publicKey: 'k1',
  secretHash: 'h1',
  createdAt: '2026-11-23T00:00:00.000Z',
  ...patch,
});
const rec = (id: string): PendingRecovery => ({ id, principalId: P, startedAt: 1_900_000_000_000, completesAt: 1_900_172_800_000 });

function contract(name: string, make: () => Promise<RecoveryStore & { close(): Promise<void> }>) {
  describe(`recovery store contract: ${name}`, () => {
    let s: RecoveryStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('finds the principal by public key; a new set-up replaces the old key everywhere', async () => {
      await s.setUp(key());
      expect(await s.byPublicKey('k1')).to.deep.equal(key());
      expect(await s.keyOf(P)).to.deep.equal(key());
      await s.setUp(key({ publicKey: 'k2', secretHash: 'h2' }));
      expect(await s.byPublicKey('k1')).to.equal(null);
      expect((await s.byPublicKey('k2'))!.secretHash).to.equal('h2');
      expect(await s.keyOf('did:web:x:tenant:none')).to.equal(null);
    });

    it('starts a recovery with the right secret once: the secret is used up', async () => {
      await s.setUp(key());
      expect(await s.start(rec('r1'), 'wrong')).to.equal('secret-invalid');
      expect(await s.pending(P)).to.equal(null);
      expect(await s.start(rec('r1'), 'h1')).to.equal('started');
      expect(await s.pending(P)).to.deep.equal(rec('r1'));
      expect((await s.keyOf(P))!.secretHash).to.equal(null);
      expect(await s.end(P)).to.equal(true);
      expect(await s.start(rec('r2'), 'h1')).to.equal('secret-invalid');
      expect(await s.start(rec('r2'), 'h1'.replace('1', '2'))).to.equal('secret-invalid');
    });

    it('one recovery at a time; racing starts open exactly one', async () => {
      await s.setUp(key());
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => s.start(rec(`r${i}`), 'h1')));
      expect(results.filter((r) => r === 'started')).to.have.length(1);
      await s.setUp(key({ secretHash: 'h2' }));
      expect(await s.start(rec('rx'), 'h2')).to.equal('pending');
      expect((await s.keyOf(P))!.secretHash).to.equal('h2'); // not used up by a refused start
    });

    it('closes a recovery once, and only the one named', async () => {
      await s.setUp(key());
      await s.start(rec('r1'), 'h1');
      expect(await s.end(P, 'other')).to.equal(false);
      expect(await s.end(P, 'r1')).to.equal(true);
      expect(await s.end(P, 'r1')).to.equal(false);
      expect(await s.end(P)).to.equal(false);
      expect(await s.pending(P)).to.equal(null);
    });

    it('a cancel by the owner ends the pending recovery once and leaves the owner a notice of it', async () => {
      await s.setUp(key());
      expect(await s.cancel(P, 'passkey', 1_900_000_000_500)).to.equal(null);
      expect(await s.lastCancelled(P)).to.equal(null);
      await s.start(rec('r1'), 'h1');
      const notice = { id: 'r1', startedAt: 1_900_000_000_000, cancelledAt: 1_900_000_001_000, by: 'siwe' };
      const racing = await Promise.all(Array.from({ length: 4 }, () => s.cancel(P, 'siwe', 1_900_000_001_000)));
      expect(racing.filter((r) => r !== null)).to.deep.equal([notice]);
      expect(await s.pending(P)).to.equal(null);
      expect(await s.lastCancelled(P)).to.deep.equal(notice);
      expect(await s.end(P, 'r1')).to.equal(false);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryRecoveryStore(), { close: async () => {} }));

onRedis('recovery store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisRecoveryStore(store), { close: () => store.close() });
  }),
);
