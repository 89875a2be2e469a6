/**
 * One contract for both session stores (memory, and Redis on a real redis-server): a session lives until
 * its idle or absolute end on the caller's clock, a touch restarts its idle clock, ending one or all of a
 * principal's sessions is final, and a dead session is never revived.
 */
import { expect } from 'chai';
import { MemorySessionStore } from '../../src/sessions/memory-store.js';
import { RedisSessionStore } from '../../src/sessions/redis-store.js';
import { createHash } from 'node:crypto';
import type { SessionRecord, SessionStore } from '../../src/sessions/store.js';
import { onRedis } from '../helpers/redis-contract.js';
import { until } from '../helpers/wait.js';

const IDLE = 60_000;
/** A test's own script (run through the store, so it reaches the node of its route key on a cluster). */
const KEYS_SOURCE = "return redis.call('KEYS', ARGV[1])";
const KEYS = { name: 'keys', source: KEYS_SOURCE, sha1: createHash('sha1').update(KEYS_SOURCE).digest('hex'), readOnly: true };
const T0 = 1_900_000_000_000;

function session(hash: string, patch: Partial<SessionRecord> = {}): SessionRecord {
  return { hash, principalId: 'did:web:x:tenant:a', method: 'passkey', state: 'active', createdAt: T0, lastSeenAt: T0, expiresAt: T0 + 600_000, ...patch };
}

function contract(name: string, make: () => Promise<SessionStore & { close(): Promise<void> }>) {
  describe(`session store contract: ${name}`, () => {
    let s: SessionStore & { close(): Promise<void> };
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('finds a live session, and restarts its idle clock on each touch', async () => {
      await s.create(session('a'), IDLE);
      expect(await s.touch('a', T0 + 1000, IDLE)).to.deep.equal(session('a', { lastSeenAt: T0 + 1000 }));
      // 59 s after the last touch (not after creation): still alive.
      expect((await s.touch('a', T0 + 1000 + IDLE - 1, IDLE))?.lastSeenAt).to.equal(T0 + IDLE + 999);
      expect(await s.touch('unknown', T0, IDLE)).to.equal(null);
    });

    it('ends a session idle for the idle lifetime, and it stays ended', async () => {
      await s.create(session('a'), IDLE);
      expect(await s.touch('a', T0 + IDLE, IDLE)).to.equal(null);
      expect(await s.touch('a', T0 + 1, IDLE)).to.equal(null);
    });

    it('ends a session at its absolute end, however active', async () => {
      await s.create(session('a', { expiresAt: T0 + 90_000 }), IDLE);
      expect(await s.touch('a', T0 + 50_000, IDLE)).to.not.equal(null);
      expect(await s.touch('a', T0 + 89_999, IDLE)).to.not.equal(null);
      expect(await s.touch('a', T0 + 90_000, IDLE)).to.equal(null);
    });

    it('ends one session: the others of the principal live on', async () => {
      await s.create(session('a'), IDLE);
      await s.create(session('b'), IDLE);
      expect(await s.end('a')).to.equal(true);
      expect(await s.end('a')).to.equal(false);
      expect(await s.touch('a', T0, IDLE)).to.equal(null);
      expect(await s.touch('b', T0, IDLE)).to.not.equal(null);
    });

    it('ends every session of a principal, and only that principal', async () => {
      await s.create(session('a'), IDLE);
      await s.create(session('b'), IDLE);
      await s.create(session('c', { principalId: 'did:web:x:tenant:other' }), IDLE);
      expect(await s.endAll('did:web:x:tenant:a')).to.equal(2);
      expect(await s.touch('a', T0, IDLE)).to.equal(null);
      expect(await s.touch('b', T0, IDLE)).to.equal(null);
      expect(await s.touch('c', T0, IDLE)).to.not.equal(null);
      expect(await s.endAll('did:web:x:tenant:a')).to.equal(0);
      // A session started after "sign out everywhere" is a new one, and lives.
      await s.create(session('d'), IDLE);
      expect(await s.touch('d', T0, IDLE)).to.not.equal(null);
    });

    it('moves a live pending-2fa session to active with its new end, and nothing else', async () => {
      await s.create(session('a', { state: 'pending-2fa', expiresAt: T0 + 30_000 }), IDLE);
      expect((await s.touch('a', T0, IDLE))!.state).to.equal('pending-2fa');
      expect(await s.activate('a', T0 + 900_000, T0 + 1000, IDLE)).to.equal(true);
      expect(await s.touch('a', T0 + 100_000 - 1, IDLE)).to.equal(null); // idle: 99 s since the activation
      await s.create(session('b', { state: 'pending-2fa', expiresAt: T0 + 30_000 }), IDLE);
      expect(await s.activate('b', T0 + 900_000, T0 + 1000, IDLE)).to.equal(true);
      expect(await s.touch('b', T0 + 50_000, IDLE)).to.deep.include({ state: 'active', expiresAt: T0 + 900_000 });
      expect(await s.activate('b', T0 + 900_000, T0 + 50_000, IDLE)).to.equal(false); // not pending any more
      await s.create(session('c', { state: 'pending-2fa', expiresAt: T0 + 30_000 }), IDLE);
      expect(await s.activate('c', T0 + 900_000, T0 + 30_000, IDLE)).to.equal(false); // its pending time ran out
      expect(await s.activate('gone', T0 + 900_000, T0, IDLE)).to.equal(false);
    });

    it('hands out copies', async () => {
      const rec = session('a');
      await s.create(rec, IDLE);
      rec.principalId = 'changed';
      const read = (await s.touch('a', T0, IDLE))!;
      read.state = 'pending-2fa';
      expect((await s.touch('a', T0, IDLE))!).to.deep.include({ principalId: 'did:web:x:tenant:a', state: 'active' });
    });
  });
}

contract('memory', async () => Object.assign(new MemorySessionStore(), { close: async () => {} }));

onRedis('session store on redis', (connect) => {
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisSessionStore(store), { close: () => store.close() });
  });

  it('keeps only hashes, and lets Redis drop a dead session by itself', async () => {
    const store = await connect();
    try {
      const s = new RedisSessionStore(store);
      const now = Date.now();
      await s.create(session('h1', { createdAt: now, lastSeenAt: now, expiresAt: now + 150 }), IDLE);
      // The sessions' own prefix (their hash tag on a cluster), and a key of it to reach the node holding them.
      const prefix = store.familyPrefix('ses');
      const route = [`${prefix}ses:h1`];
      const keys = await store.runScript('test.keys', KEYS, route, [`${prefix}*`]);
      expect(keys).to.include(`${prefix}ses:h1`);
      // Redis expires the key on its own clock, past the session's absolute end (150 ms from now).
      await until(async () => ((await store.runScript('test.keys', KEYS, route, [`${prefix}ses:*`])) as string[]).length === 0, {
        what: 'Redis to drop the dead session',
      });
    } finally {
      await store.close();
    }
  });
});
