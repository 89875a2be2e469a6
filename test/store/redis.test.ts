/**
 * What only the Redis store can show, against private redis-servers: a steady `identify` reads nothing but
 * its fence on the wire (one command, one EVALSHA, with the identity cache off),
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
import { until } from '../helpers/wait.js';

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

/**
 * How a promise rejected, and after how many ms. A promise still pending after `boundMs` fails the test:
 * the bound is there to tell a hang from a deadline, so it is far above any deadline set here (never a
 * measure of speed).
 */
async function rejectionWithin(promise: Promise<unknown>, boundMs = 15_000): Promise<{ err: unknown; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${boundMs} ms: a hang, not a deadline`)), boundMs);
  });
  try {
    await Promise.race([promise, hung]);
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('still pending after')) throw err;
    return { err, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
  throw new Error('expected a rejection');
}

/** Until the store answers a PING again (Redis back, the store reconnected). */
async function untilAnswers(store: Store): Promise<void> {
  await until(async () => (await store.ping(), true), { what: 'the store to answer a PING' });
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

    /** What the client sent between two markers, per MONITOR (a script's own commands left out), and INFO commandstats' change. */
    async function onTheWire(act: () => Promise<unknown>): Promise<{ sent: string[]; delta: Record<string, number> }> {
      const monitor = await admin(server);
      const lines: string[] = [];
      let sawEnd: () => void = () => undefined;
      const seen = new Promise<void>((resolve) => (sawEnd = resolve));
      await monitor.monitor((line) => {
        lines.push(String(line));
        if (String(line).includes('act-end')) sawEnd();
      });
      const before = await commandCalls(client);
      await client.sendCommand(['ECHO', 'act-start']);
      await act();
      await client.sendCommand(['ECHO', 'act-end']);
      const after = await commandCalls(client);
      await seen;
      monitor.destroy();
      const start = lines.findIndex((l) => l.includes('act-start'));
      const end = lines.findIndex((l) => l.includes('act-end'));
      expect(start).to.be.greaterThan(-1);
      expect(end).to.be.greaterThan(start);
      // Commands a script runs show as "[0 lua]"; what the client sent shows with its address.
      const sent = lines.slice(start + 1, end).filter((l) => !/\[\d+ lua\]/.test(l));
      const delta: Record<string, number> = {};
      for (const [command, calls] of Object.entries(after)) if (calls !== (before[command] ?? 0)) delta[command] = calls - (before[command] ?? 0);
      delete delta['echo'];
      delete delta['info'];
      return { sent, delta };
    }

    it('reads a token from Redis once, then from its own cache: a steady identify reads no identity key, it only fences (MONITOR, INFO commandstats)', async () => {
      const fresh = await RedisStore.connect({ url: server.url });
      try {
        const first = await onTheWire(async () => expect((await fresh.identify(pat.hash))?.principal.id).to.equal(PID));
        // The fence, then hash -> token -> principal (+ scopes, order, legacy flag) as plain, cacheable reads.
        expect(first.sent.some((l) => l.includes(`pc:th:${pat.hash}`))).to.equal(true);
        expect(first.sent.some((l) => l.includes(`pc:p:${PID}`))).to.equal(true);

        const second = await onTheWire(async () => {
          const identity = await fresh.identify(pat.hash);
          expect(identity?.principal).to.deep.equal(alice);
          expect(identity?.token).to.deep.equal(pat);
        });
        expect(second.sent).to.have.length(1);
        expect(second.sent[0]).to.match(/"ping"$/i);
        expect(second.delta).to.deep.equal({ ping: 1 });
      } finally {
        await fresh.close();
      }
    });

    it('with the cache off, identifies a token with exactly one command (one EVALSHA)', async () => {
      const uncached = await RedisStore.connect({ url: server.url, identityCacheEntries: 0 });
      try {
        await uncached.identify(pat.hash); // warm the script cache so the measured call needs no NOSCRIPT retry
        const { sent, delta } = await onTheWire(async () => expect((await uncached.identify(pat.hash))?.principal.id).to.equal(PID));
        expect(sent).to.have.length(1);
        expect(sent[0]).to.match(/"evalsha_ro"/i);
        const scripted = ['eval', 'eval_ro', 'evalsha', 'evalsha_ro'];
        expect(scripted.reduce((n, c) => n + (delta[c] ?? 0), 0)).to.equal(1);
      } finally {
        await uncached.close();
      }
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
      // No test here needs this store's deadline to pass: long enough for any fsync on a busy machine.
      store = await RedisStore.connect({ url: server.url, commandTimeoutMs: 10_000 });
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
      // A store whose deadline (60 s) is twice the test's timeout: a call that waited for it, or queued until
      // Redis came back, would time the test out. Each rejects on its own, so none waits.
      const patient = await RedisStore.connect({ url: server.url, commandTimeoutMs: 60_000 });
      try {
        await server.kill('SIGKILL');
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['ping', () => patient.ping()],
          ['createPrincipal', () => patient.createPrincipal({ ...alice, id: `${PID}-2` })],
          ['getPrincipal', () => patient.getPrincipal(PID)],
          ['setRung', () => patient.setRung(PID, { id: 'L1', grantedAt: 'g', expiresAt: 'e', source: 'o' }, null)],
          ['putScope', () => patient.putScope(PID, alice.scopes[0]!)],
          ['putToken', () => patient.putToken({ ...pat, id: 't9', hash: 'f'.repeat(64) })],
          ['identify', () => patient.identify(pat.hash)],
          ['listTokens', () => patient.listTokens(PID)],
          ['revokeToken', () => patient.revokeToken('t1', 'now')],
          ['revokeLegacyTokens', () => patient.revokeLegacyTokens('now')],
          ['putReceipt', () => patient.putReceipt({ id: 'call-9', principalId: PID, createdAt: 'c' })],
          ['getReceipt', () => patient.getReceipt('call-1')],
        ];
        for (const [name, call] of calls) {
          const { err } = await rejectionWithin(call());
          expect(err, name).to.be.instanceOf(StoreUnavailable);
        }
      } finally {
        await patient.close();
      }
      await server.restart();
      await untilAnswers(store);
      expect((await store.getPrincipal(PID))?.username).to.equal('alice');
    });

    it('fails calls to a frozen Redis (SIGSTOP) at the deadline, then heals on a fresh connection', async () => {
      // A 3 s deadline: the first call must not give up before it; the next must not wait for its own.
      const DEADLINE_MS = 3000;
      const frozen = await RedisStore.connect({ url: server.url, commandTimeoutMs: DEADLINE_MS });
      await server.kill('SIGSTOP');
      try {
        const { err, ms } = await rejectionWithin(frozen.identify(pat.hash));
        expect(err).to.be.instanceOf(StoreUnavailable);
        // Timers never fire early (a few ms of clock rounding aside): this is the deadline, not a speed.
        expect(ms).to.be.at.least(DEADLINE_MS - 20);
        // The stale connection was dropped: a later call fails on its own, without queueing behind it
        // until its deadline.
        const next = await rejectionWithin(frozen.getPrincipal(PID));
        expect(next.err).to.be.instanceOf(StoreUnavailable);
        expect(String((next.err as Error).message)).to.not.match(/no reply within/);
      } finally {
        await server.kill('SIGCONT');
      }
      await untilAnswers(frozen);
      expect((await frozen.identify(pat.hash))?.principal.id).to.equal(PID);
      await frozen.close();
    });
  });

  describe('startup', () => {
    it('refuses to start against a port nobody listens on, within the connect budget', async () => {
      const url = `redis://127.0.0.1:${await freePort()}`;
      // The client retries forever on its own: without the connect deadline this would hang.
      const { err } = await rejectionWithin(createStore({ kind: 'redis', url, connectTimeoutMs: 800 }));
      expect(err).to.be.instanceOf(StoreUnavailable);
    });

    it('refuses to start against a Redis that accepts connections but never answers (SIGSTOP)', async () => {
      const server = await startRedisServer();
      try {
        await server.kill('SIGSTOP');
        const { err } = await rejectionWithin(RedisStore.connect({ url: server.url, connectTimeoutMs: 800 }));
        expect(err).to.be.instanceOf(StoreUnavailable);
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
        // Refused at once (the probe does not retry), so a budget no busy machine reaches: the reason asserted
        // below comes from the server's reply, which a short budget could cut off first.
        const plain = await rejectionWithin(RedisStore.connect({ clusterNodes: [`127.0.0.1:${server.port}`], connectTimeoutMs: 10_000 }));
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
