/**
 * The identity cache (src/store/identity-cache.ts) against a real redis-server and a real three-master
 * cluster: two stores on one Redis stand for two gateways. A store that has a token and its principal
 * cached sees a change written through the other store on its very next read, whether that read was
 * already queued behind a burst of reads, came after its tracking connection was killed, or after the
 * identity slot's master died and its replica took over (it fails closed in between). No sleeps: the
 * writing store's call returning is the event.
 */
import { expect } from 'chai';
import { RedisStore } from '../../src/store/redis.js';
import { StoreUnavailable } from '../../src/store/errors.js';
import { IDENTITY_BACKENDS, killTrackingConnections, startIdentityRedis, type IdentityRedis } from '../helpers/identity-cache.js';
import type { PrincipalRecord, TokenRecord } from '../../src/store/store.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { until } from '../helpers/wait.js';

let n = 0;
/** Waits until `act` stops failing with StoreUnavailable (a store failing closed), and gives its answer. */
async function onceAvailable<T>(act: () => Promise<T>, what: string): Promise<{ value: T }> {
  return until(
    async () => {
      try {
        return { value: await act() };
      } catch (err) {
        if (err instanceof StoreUnavailable) return null;
        throw err;
      }
    },
    { what },
  );
}

function fresh(): { principal: PrincipalRecord; token: TokenRecord } {
  n += 1;
  const id = `did:web:portcullis.test:tenant:cache-${process.pid}-${n}`;
  return {
    principal: { id, username: `cache${n}`, createdAt: '2030-01-01T00:00:00.000Z', rung: null, aup: null, scopes: [] },
    token: {
      id: `tok_cache_${process.pid}_${n}`,
      principalId: id,
      label: 'laptop',
      format: 'v2',
      hash: n.toString(16).padStart(64, 'c'),
      createdAt: '2030-01-01T00:00:00.000Z',
      revokedAt: null,
    },
  };
}

for (const backend of IDENTITY_BACKENDS) {
  describe(`identity cache, two stores on ${backend}`, function () {
    this.timeout(90_000);
    let redis: IdentityRedis | undefined;
    let writer: RedisStore;
    let reader: RedisStore;

    before(async () => {
      redis = await startIdentityRedis(backend);
      [writer, reader] = await Promise.all([RedisStore.connect(redis.store), RedisStore.connect(redis.store)]);
    });
    after(async () => {
      await Promise.all([writer?.close(), reader?.close()]);
      await redis?.stop();
    });

    async function cached(): Promise<{ principal: PrincipalRecord; token: TokenRecord }> {
      const f = fresh();
      await writer.createPrincipal(f.principal);
      await writer.putToken(f.token);
      // Read twice: the second is served from the reader's cache (test/store/redis.test.ts shows it reads no key).
      expect((await reader.identify(f.token.hash))?.token.revokedAt).to.equal(null);
      expect((await reader.identify(f.token.hash))?.token.revokedAt).to.equal(null);
      expect(reader.identityCacheSize).to.be.greaterThan(0);
      return f;
    }

    it('serves a revocation written through the other store from the very next identify', async () => {
      const f = await cached();
      await writer.revokeToken(f.token.id, '2030-01-02T00:00:00.000Z');
      expect((await reader.identify(f.token.hash))?.token.revokedAt).to.equal('2030-01-02T00:00:00.000Z');
    });

    it('serves a changed principal (a rung, a scope) from the very next read, by token and by id', async () => {
      const f = await cached();
      expect((await reader.getPrincipal(f.principal.id))?.rung).to.equal(null);
      const rung = { id: 'card', grantedAt: '2030-01-02T00:00:00.000Z', expiresAt: '2031-01-02T00:00:00.000Z', source: 'operator' };
      await writer.setRung(f.principal.id, rung, null);
      expect((await reader.identify(f.token.hash))?.principal.rung).to.deep.equal(rung);
      const scope = { id: 'owned', status: 'approved' as const, tasks: ['code-review'], approvedAt: '2030-01-02T00:00:00.000Z' };
      await writer.putScope(f.principal.id, scope);
      expect((await reader.getPrincipal(f.principal.id))?.scopes).to.deep.equal([scope]);
      await writer.putScope(f.principal.id, { ...scope, status: 'revoked' });
      expect((await reader.identify(f.token.hash))?.principal.scopes[0]?.status).to.equal('revoked');
    });

    it('serves the bulk legacy revocation from the very next identify', async () => {
      const f = await cached();
      expect((await reader.identify(f.token.hash))?.legacyRevoked).to.equal(false);
      await writer.revokeLegacyTokens('2030-01-03T00:00:00.000Z');
      expect((await reader.identify(f.token.hash))?.legacyRevoked).to.equal(true);
    });

    it('under a burst of concurrent reads, no read that starts after the revocation returned sees the token active', async () => {
      const f = await cached();
      let revoked = false;
      let stop = false;
      const stale: number[] = [];
      let afterRevocation = 0;
      // Eight readers, each identifying back to back, while the revocation goes in through the other store.
      const readers = Array.from({ length: 8 }, async () => {
        while (!stop) {
          const startedAfter = revoked;
          const identity = await reader.identify(f.token.hash);
          if (startedAfter) {
            afterRevocation += 1;
            if (identity?.token.revokedAt === null) stale.push(afterRevocation);
            if (afterRevocation >= 200) stop = true;
          }
        }
      });
      // Let the burst get going: a few hundred reads served before the write.
      await until(() => reader.identityCacheSize > 0, { what: 'the reader to have the token cached' });
      for (let i = 0; i < 50; i++) await reader.identify(f.token.hash);
      await writer.revokeToken(f.token.id, '2030-01-04T00:00:00.000Z');
      revoked = true;
      await Promise.all(readers);
      expect(afterRevocation).to.be.at.least(200);
      expect(stale, 'reads started after the revocation returned that saw the token active').to.deep.equal([]);
    });

    it('after its tracking connection is killed, a revocation made meanwhile is still seen (the cache was dropped)', async () => {
      const f = await cached();
      expect(await killTrackingConnections(redis!.ports)).to.be.at.least(1);
      // Made while (or before) the reader reconnects: its invalidation may never reach the old connection.
      await writer.revokeToken(f.token.id, '2030-01-05T00:00:00.000Z');
      // Until the reader's tracking connection is back its reads fail closed; after that they read Redis.
      const seen = await onceAvailable(async () => await reader.identify(f.token.hash), 'the reader to answer again after its connection was killed');
      expect(seen.value?.token.revokedAt).to.equal('2030-01-05T00:00:00.000Z');
    });
  });
}

describe('identity cache through a failover of the identity master', function () {
  this.timeout(120_000);
  let cluster: RedisCluster;
  let writer: RedisStore;
  let reader: RedisStore;

  before(async () => {
    cluster = await startRedisCluster({ replicas: 1 });
    // No call here needs a deadline to fail: a dead master's connection is refused at once. So one no busy
    // machine reaches, for the writes before the kill (each waits for its fsync).
    const options = { clusterNodes: cluster.seeds, commandTimeoutMs: 10_000 };
    [writer, reader] = await Promise.all([RedisStore.connect(options), RedisStore.connect(options)]);
  });
  after(async () => {
    await Promise.all([writer?.close(), reader?.close()]);
    await cluster?.stop();
  });

  /** What a call answers, or the error it failed with. */
  async function outcome<T>(p: Promise<T>): Promise<T | Error> {
    try {
      return await p;
    } catch (err) {
      return err as Error;
    }
  }

  it('fails closed while the master is gone, then sees a revocation made on the promoted replica', async () => {
    const f = fresh();
    await writer.createPrincipal(f.principal);
    await writer.putToken(f.token);
    expect((await reader.identify(f.token.hash))?.token.revokedAt).to.equal(null);
    expect((await reader.identify(f.token.hash))?.token.revokedAt).to.equal(null);

    const master = await cluster.masterOf('{pc:id}:');
    const replica = await cluster.replicaOf(master);
    // The replica must hold the token before its master dies (replication is asynchronous): as many keys.
    const keys = async (port: number) => Number((await cluster.cli(port, 'DBSIZE')).trim());
    await until(async () => (await keys(replica.port)) === (await keys(master.port)), { what: 'the replica to hold what its master holds' });
    await master.kill('SIGKILL');
    // While the slot has no master: never a cached answer, always StoreUnavailable.
    const during = await outcome(reader.identify(f.token.hash));
    expect(during).to.be.instanceOf(StoreUnavailable);
    await cluster.waitForPromotion(replica.port);

    // The revocation, made once the writer reaches the promoted master (a refused attempt changed nothing).
    const revoked = await until(
      async () => {
        const r = await outcome(writer.revokeToken(f.token.id, '2030-01-06T00:00:00.000Z'));
        return r instanceof StoreUnavailable ? null : r;
      },
      { what: 'the writer to reach the promoted master' },
    );
    expect(revoked).to.not.be.instanceOf(Error);
    expect((revoked as TokenRecord | null)?.revokedAt).to.equal('2030-01-06T00:00:00.000Z');
    const seen = await until(
      async () => {
        const r = await outcome(reader.identify(f.token.hash));
        if (r instanceof StoreUnavailable) return null;
        return { r };
      },
      { what: 'the reader to reach the promoted master' },
    );
    expect(seen.r).to.not.be.instanceOf(Error);
    expect((seen.r as Awaited<ReturnType<RedisStore['identify']>>)?.token.revokedAt).to.equal('2030-01-06T00:00:00.000Z');
  });
});

/**
 * A master that hangs rather than dies (SIGSTOP: its kernel still accepts connections, nothing answers): its
 * replica is promoted, and both the store's main connection and its identity cache must find the promoted
 * master by themselves, while the old one is still frozen, not when it is thawed.
 */
describe('a hung (frozen, not dead) identity master, its replica promoted', function () {
  this.timeout(120_000);
  let cluster: RedisCluster;
  let writer: RedisStore;
  let reader: RedisStore;
  let frozen: RedisServer | undefined;
  /** The token's writes before the freeze, under a deadline no busy machine reaches (each waits for its fsync). */
  let setup: RedisStore;

  before(async () => {
    cluster = await startRedisCluster({ replicas: 1 });
    // The frozen master is found by the command deadline (a call past it gets a fresh client, which re-learns
    // the cluster): short, so the calls after the freeze find the promoted replica within the test's waits.
    const options = { clusterNodes: cluster.seeds, commandTimeoutMs: 1000, connectTimeoutMs: 3000 };
    [writer, reader, setup] = await Promise.all([
      RedisStore.connect(options),
      RedisStore.connect(options),
      RedisStore.connect({ ...options, commandTimeoutMs: 10_000, identityCacheEntries: 0 }),
    ]);
  });
  after(async () => {
    await frozen?.kill('SIGCONT');
    await Promise.all([writer?.close(), reader?.close(), setup?.close()]);
    await cluster?.stop();
  });

  it('serves again from the promoted replica while the old master is still frozen, revocation included', async () => {
    const f = fresh();
    await setup.createPrincipal(f.principal);
    await setup.putToken(f.token);
    expect((await reader.identify(f.token.hash))?.token.revokedAt).to.equal(null);
    const master = await cluster.masterOf('{pc:id}:');
    const replica = await cluster.replicaOf(master);
    const keys = async (port: number) => Number((await cluster.cli(port, 'DBSIZE')).trim());
    await until(async () => (await keys(replica.port)) === (await keys(master.port)), { what: 'the replica to hold what its master holds' });
    frozen = master;
    await master.kill('SIGSTOP');
    await cluster.waitForPromotion(replica.port);

    const revoked = await onceAvailable(
      async () => await writer.revokeToken(f.token.id, '2030-01-07T00:00:00.000Z'),
      'the writer to reach the promoted master while the old one is frozen',
    );
    expect(revoked.value?.revokedAt).to.equal('2030-01-07T00:00:00.000Z');
    const seen = await onceAvailable(async () => await reader.identify(f.token.hash), 'the reader to reach the promoted master while the old one is frozen');
    expect(seen.value?.token.revokedAt).to.equal('2030-01-07T00:00:00.000Z');
  });
});
