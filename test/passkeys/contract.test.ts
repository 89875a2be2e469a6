/**
 * One contract for both passkey stores (memory, and Redis on a real redis-server): a credential id is
 * registered once, listed under its principal in order, and its counter only moves forward — of two
 * assertions with the same counter, one is refused, even when they race. The lock on a principal's sign-in
 * methods has one holder at a time.
 */
import { expect } from 'chai';
import { MemoryPasskeyStore } from '../../src/passkeys/memory-store.js';
import { RedisPasskeyStore } from '../../src/passkeys/redis-store.js';
import type { PasskeyRecord, PasskeyStore } from '../../src/passkeys/store.js';
import { onRedis } from '../helpers/redis-contract.js';

function passkey(id: string, patch: Partial<PasskeyRecord> = {}): PasskeyRecord {
  return {
    id,
    principalId: 'did:web:x:tenant:a',
    publicKey: 'pQECAyYgASFY',
    counter: 0,
    transports: ['internal'],
    createdAt: '2026-11-23T00:00:00.000Z',
    lastUsedAt: null,
    ...patch,
  };
}

function contract(name: string, make: () => Promise<PasskeyStore & { close(): Promise<void> }>) {
  describe(`passkey store contract: ${name}`, () => {
    let s: PasskeyStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('registers a credential id once, and reads it back as stored', async () => {
      expect(await s.add(passkey('a'))).to.equal(true);
      expect(await s.add(passkey('a', { principalId: 'did:web:x:tenant:thief' }))).to.equal(false);
      expect(await s.get('a')).to.deep.equal(passkey('a'));
      expect(await s.get('b')).to.equal(null);
    });

    it("lists a principal's passkeys oldest first, and no one else's", async () => {
      await s.add(passkey('b'));
      await s.add(passkey('c', { principalId: 'did:web:x:tenant:other', transports: [] }));
      await s.add(passkey('a'));
      expect((await s.list('did:web:x:tenant:a')).map((p) => p.id)).to.deep.equal(['b', 'a']);
      expect(await s.list('did:web:x:tenant:other')).to.deep.equal([passkey('c', { principalId: 'did:web:x:tenant:other', transports: [] })]);
      expect(await s.list('did:web:x:tenant:none')).to.deep.equal([]);
    });

    it('removes a credential only for its principal, from the record and the list', async () => {
      await s.add(passkey('a'));
      await s.add(passkey('b'));
      expect(await s.remove('a', 'did:web:x:tenant:other')).to.equal(false);
      expect(await s.get('a')).to.not.equal(null);
      expect(await s.remove('a', 'did:web:x:tenant:a')).to.equal(true);
      expect(await s.remove('a', 'did:web:x:tenant:a')).to.equal(false);
      expect(await s.get('a')).to.equal(null);
      expect((await s.list('did:web:x:tenant:a')).map((p) => p.id)).to.deep.equal(['b']);
    });

    it("holds the lock on a principal's sign-in methods for one taker at a time, released only by its holder", async () => {
      const a = 'did:web:x:tenant:a';
      const token = await s.lockMethods(a, 60_000);
      expect(token).to.be.a('string');
      expect(await s.lockMethods(a, 60_000)).to.equal(null);
      expect(await s.lockMethods('did:web:x:tenant:other', 60_000)).to.be.a('string');
      await s.unlockMethods(a, 'not-the-token');
      expect(await s.lockMethods(a, 60_000)).to.equal(null);
      await s.unlockMethods(a, token!);
      expect(await s.lockMethods(a, 60_000)).to.be.a('string');
    });

    it('moves the counter only forward', async () => {
      await s.add(passkey('a', { counter: 5 }));
      expect(await s.advance('a', 5, 't1')).to.equal(false);
      expect(await s.advance('a', 4, 't1')).to.equal(false);
      expect(await s.advance('a', 6, 't2')).to.equal(true);
      expect(await s.get('a')).to.deep.include({ counter: 6, lastUsedAt: 't2' });
      expect(await s.advance('unknown', 9, 't')).to.equal(false);
    });

    it('accepts 0 after 0 (authenticators without a counter)', async () => {
      await s.add(passkey('a'));
      expect(await s.advance('a', 0, 't1')).to.equal(true);
      expect(await s.advance('a', 0, 't2')).to.equal(true);
    });

    it('of racing assertions with the same counter, exactly one wins', async () => {
      await s.add(passkey('a', { counter: 1 }));
      const results = await Promise.all(Array.from({ length: 6 }, () => s.advance('a', 2, 't')));
      expect(results.filter(Boolean)).to.have.length(1);
    });
  });
}

contract('memory', async () => Object.assign(new MemoryPasskeyStore(), { close: async () => {} }));

onRedis('passkey store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisPasskeyStore(store), { close: () => store.close() });
  }),
);
