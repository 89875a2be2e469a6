/**
 * What only the Redis store can show, against private redis-servers: `identify` is one command on the wire,
 * a lost script cache costs nothing, prefixes keep stores apart, acknowledged writes survive a SIGKILL, and
 * an unreachable or hung Redis fails calls fast with StoreUnavailable instead of hanging them. The shared
 * behaviour is in `contract.test.ts`.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { createStore } from '../../src/store/index.js';
import { RedisStore } from '../../src/store/redis.js';
import { StoreUnavailable } from '../../src/store/errors.js';
import type { PrincipalRecord, Store, TokenRecord } from '../../src/store/store.js';
import { freePort } from '../helpers/ports.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const PID = 'did:web:portcullis.test:tenant:alice';

const alice: PrincipalRecord = {
  id: PID,
  username: 'alice',
  createdAt: '2025-01-01T00:00:00.000Z',
  rung: null,
  aup: null,
  scopes: [{ id: 'owned', status: 'approved', tasks: ['code-review'], approvedAt: '2025-01-01T00:00:00.000Z' }],
};

const pat: TokenRecord = {
  id: 't1',
  principalId: PID,
  label: 'laptop',
  format: 'v2',
  hash: 'a'.repeat(64),
  createdAt: '2025-01-01T00:00:00.000Z',
  revokedAt: null,
};

const adminClient = (url: string) => createClient({ url });
type AdminClient = ReturnType<typeof adminClient>;

/** A plain client for looking behind the store's back (INFO, MONITOR, SCRIPT FLUSH, KEYS). */
async function admin(server: RedisServer): Promise<AdminClient> {
  const client = adminClient(server.url);
  client.on('error', () => {}); // the servers here get killed on purpose
  await client.connect();
  return client;
}

async function rejectionWithin(promise: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  try {
    await promise;
  } catch (err) {
    return { err, ms: Date.now() - started };
  }
  throw new Error('expected a rejection');
}

async function untilAnswers(store: Store, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await store.ping();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** `INFO commandstats` as {command: calls}. */
async function commandCalls(client: AdminClient): Promise<Record<string, number>> {
  const info = await client.sendCommand<string>(['INFO', 'commandstats']);
  const calls: Record<string, number> = {};
  for (const [, command, count] of String(info).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls[command ?? ''] = Number(count);
  }
  return calls;
}

describe('redis store', () => {
  describe('on the wire', () => {
    let server: RedisServer;
    let store: RedisStore;
    let client: AdminClient;
    before(async () => {
      server = await startRedisServer();
      store = await RedisStore.connect({ url: server.url });
      client = await admin(server);
      await store.createPrincipal(alice);
      await store.putToken(pat);
    });
    after(async () => {
      await store?.close();
      await client?.close();
      await server?.stop();
    });

    it('identifies a token with exactly one command (one EVALSHA), per MONITOR and INFO commandstats', async () => {
      await store.identify(pat.hash); // warm the script cache so the measured call needs no NOSCRIPT retry
      const monitor = await admin(server);
      const lines: string[] = [];
      await monitor.monitor((line) => lines.push(String(line)));
      const before = await commandCalls(client);
      await client.sendCommand(['ECHO', 'identify-start']);

      const identity = await store.identify(pat.hash);

      await client.sendCommand(['ECHO', 'identify-end']);
      const after = await commandCalls(client);
      const deadline = Date.now() + 2000;
      while (!lines.some((l) => l.includes('identify-end')) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 10));
      }
      monitor.destroy();

      expect(identity?.principal.id).to.equal(PID);
      const start = lines.findIndex((l) => l.includes('identify-start'));
      const end = lines.findIndex((l) => l.includes('identify-end'));
      expect(start).to.be.greaterThan(-1);
      expect(end).to.be.greaterThan(start);
      // Commands a script runs show as "[0 lua]"; what the client sent shows with its address.
      const sent = lines.slice(start + 1, end).filter((l) => !/\[\d+ lua\]/.test(l));
      expect(sent).to.have.length(1);
      expect(sent[0]).to.match(/"evalsha_ro"/i);

      const scripted = ['eval', 'eval_ro', 'evalsha', 'evalsha_ro'];
      const delta = scripted.map((c) => (after[c] ?? 0) - (before[c] ?? 0));
      expect(delta.reduce((a, b) => a + b, 0)).to.equal(1);
    });

    it('re-sends a script Redis has forgotten (NOSCRIPT) without surfacing an error', async () => {
      await client.sendCommand(['SCRIPT', 'FLUSH']);
      expect((await store.identify(pat.hash))?.token.id).to.equal('t1');
      expect((await store.putScope(PID, { ...alice.scopes[0]!, id: 'lab' }))?.scopes).to.have.length(2);
    });

    it('keeps every key under its prefix, so stores with different prefixes do not see each other', async () => {
      const other = await RedisStore.connect({ url: server.url, keyPrefix: 'other:' });
      try {
        expect(await other.identify(pat.hash)).to.equal(null);
        expect(await other.getPrincipal(PID)).to.equal(null);
        await other.createPrincipal(alice); // no conflict with pc:'s alice
        await other.revokeLegacyTokens('2025-02-01T00:00:00.000Z');
        expect((await store.identify(pat.hash))?.legacyRevoked).to.equal(false);
        const keys = await client.sendCommand<string[]>(['KEYS', '*']);
        expect(keys.filter((k) => !k.startsWith('pc:') && !k.startsWith('other:'))).to.deep.equal([]);
      } finally {
        await other.close();
      }
    });

    it('lets a Redis error reply through as itself, not as StoreUnavailable', async () => {
      await client.sendCommand(['HSET', `pc:th:${'b'.repeat(64)}`, 'not', 'a string']);
      const { err } = await rejectionWithin(store.identify('b'.repeat(64)));
      expect(err).to.not.be.instanceOf(StoreUnavailable);
      expect(String(err)).to.match(/WRONGTYPE/);
    });
  });

  describe('durability and outages', () => {
    let server: RedisServer;
    let store: RedisStore;
    before(async () => {
      server = await startRedisServer();
    });
    beforeEach(async () => {
      await untilAnswersUrl(server);
      store = await RedisStore.connect({ url: server.url, commandTimeoutMs: 500 });
    });
    afterEach(async () => {
      await store?.close();
    });
    after(async () => {
      await server?.stop();
    });

    it('keeps acknowledged writes through SIGKILL and restart (appendfsync always), reconnecting itself', async () => {
      await store.createPrincipal(alice);
      await store.putToken({ ...pat, format: 'v1' });
      const l1 = { id: 'L1', grantedAt: 'g', expiresAt: 'e', source: 'operator' };
      await store.setRung(PID, l1, { version: '1', at: 'a' });
      await store.putReceipt({ id: 'call-1', principalId: PID, createdAt: 'c', chargedMicroUSD: 5 });
      expect(await store.revokeLegacyTokens('2025-02-01T00:00:00.000Z')).to.equal(1);

      await server.kill('SIGKILL');
      await server.restart();
      await untilAnswers(store);

      const identity = await store.identify(pat.hash);
      expect(identity?.principal.rung?.id).to.equal('L1');
      expect(identity?.principal.scopes).to.deep.equal(alice.scopes);
      expect(identity?.token.revokedAt).to.equal('2025-02-01T00:00:00.000Z');
      expect(identity?.legacyRevoked).to.equal(true);
      expect((await store.getReceipt('call-1'))?.['chargedMicroUSD']).to.equal(5);
    });

    it('rejects every call with StoreUnavailable at once while Redis is down, and recovers after', async () => {
      await server.kill('SIGKILL');
      const calls: Array<[string, () => Promise<unknown>]> = [
        ['ping', () => store.ping()],
        ['createPrincipal', () => store.createPrincipal({ ...alice, id: `${PID}-2` })],
        ['getPrincipal', () => store.getPrincipal(PID)],
        ['setRung', () => store.setRung(PID, { id: 'L1', grantedAt: 'g', expiresAt: 'e', source: 'o' }, null)],
        ['putScope', () => store.putScope(PID, alice.scopes[0]!)],
        ['putToken', () => store.putToken({ ...pat, id: 't9', hash: 'f'.repeat(64) })],
        ['identify', () => store.identify(pat.hash)],
        ['listTokens', () => store.listTokens(PID)],
        ['revokeToken', () => store.revokeToken('t1', 'now')],
        ['revokeLegacyTokens', () => store.revokeLegacyTokens('now')],
        ['putReceipt', () => store.putReceipt({ id: 'call-9', principalId: PID, createdAt: 'c' })],
        ['getReceipt', () => store.getReceipt('call-1')],
      ];
      for (const [name, call] of calls) {
        const { err, ms } = await rejectionWithin(call());
        expect(err, name).to.be.instanceOf(StoreUnavailable);
        expect(ms, name).to.be.below(600);
      }
      await server.restart();
      await untilAnswers(store);
      expect((await store.getPrincipal(PID))?.username).to.equal('alice');
    });

    it('fails calls to a frozen Redis (SIGSTOP) at the deadline, then heals on a fresh connection', async () => {
      await server.kill('SIGSTOP');
      try {
        const { err, ms } = await rejectionWithin(store.identify(pat.hash));
        expect(err).to.be.instanceOf(StoreUnavailable);
        expect(ms).to.be.within(400, 1500);
        // The stale connection was dropped: later calls fail at once instead of queueing behind it.
        const next = await rejectionWithin(store.getPrincipal(PID));
        expect(next.err).to.be.instanceOf(StoreUnavailable);
        expect(next.ms).to.be.below(600);
      } finally {
        await server.kill('SIGCONT');
      }
      await untilAnswers(store);
      expect((await store.identify(pat.hash))?.principal.id).to.equal(PID);
    });
  });

  describe('startup', () => {
    it('refuses to start against a port nobody listens on, within the connect budget', async () => {
      const url = `redis://127.0.0.1:${await freePort()}`;
      const { err, ms } = await rejectionWithin(createStore({ kind: 'redis', url, connectTimeoutMs: 800 }));
      expect(err).to.be.instanceOf(StoreUnavailable);
      expect(ms).to.be.below(1500);
    });

    it('refuses to start against a Redis that accepts connections but never answers (SIGSTOP)', async () => {
      const server = await startRedisServer();
      try {
        await server.kill('SIGSTOP');
        const { err, ms } = await rejectionWithin(RedisStore.connect({ url: server.url, connectTimeoutMs: 800 }));
        expect(err).to.be.instanceOf(StoreUnavailable);
        expect(ms).to.be.below(1500);
      } finally {
        await server.stop();
      }
    });

    it('refuses to start as a cluster client against nodes nobody listens on, or a Redis that is not a cluster', async () => {
      const nobody = await rejectionWithin(RedisStore.connect({ clusterNodes: [`127.0.0.1:${await freePort()}`], connectTimeoutMs: 800 }));
      expect(nobody.err).to.be.instanceOf(StoreUnavailable);
      expect((nobody.err as Error).message).to.match(/^cannot reach redis/);
      const server = await startRedisServer();
      try {
        const plain = await rejectionWithin(RedisStore.connect({ clusterNodes: [`127.0.0.1:${server.port}`], connectTimeoutMs: 800 }));
        expect(plain.err).to.be.instanceOf(StoreUnavailable);
        expect((plain.err as Error).message).to.contain('cluster support disabled');
      } finally {
        await server.stop();
      }
    });

    it('builds a memory store or a connected redis store from config', async () => {
      const memory = await createStore({ kind: 'memory' });
      expect(memory.kind).to.equal('memory');
      await memory.close();
      const server = await startRedisServer();
      try {
        const redis = await createStore({ kind: 'redis', url: server.url, keyPrefix: 'factory:' });
        expect(redis.kind).to.equal('redis');
        await redis.ping();
        await redis.close();
      } finally {
        await server.stop();
      }
    });
  });
});

/** Waits until the server answers a fresh client (it may still be replaying its AOF after a restart). */
async function untilAnswersUrl(server: RedisServer): Promise<void> {
  const client = await admin(server);
  await client.ping();
  await client.close();
}
