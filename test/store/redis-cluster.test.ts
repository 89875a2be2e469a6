/**
 * What only the store's cluster client can show, against a real three-master Redis Cluster of its own: a
 * cluster that freezes and then dies under it (every node SIGSTOPped, then SIGKILLed) fails calls with
 * StoreUnavailable, and once the nodes are back the store heals by itself, without a restart; so does one
 * whose nodes all die at once. And a store closed while its client re-learns the cluster leaves no
 * connection behind (node-redis would otherwise finish the re-learning after the close and reconnect to
 * every master, forever).
 */
import diagnostics from 'node:diagnostics_channel';
import { expect } from 'chai';
import { RedisStore } from '../../src/store/redis.js';
import { StoreUnavailable } from '../../src/store/errors.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/wait.js';

const PID = 'did:web:portcullis.test:tenant:frozen';

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return await p;
  } catch (err) {
    return err;
  }
}

describe('redis store on a cluster that freezes, dies and comes back', function () {
  this.timeout(90_000);
  let cluster: RedisCluster;

  before(async () => {
    cluster = await startRedisCluster();
  });
  after(() => cluster?.stop());

  it('fails calls with StoreUnavailable while the cluster is gone, and heals by itself once it is back', async () => {
    const store = await RedisStore.connect({ clusterNodes: cluster.seeds, commandTimeoutMs: 2000, connectTimeoutMs: 500 });
    try {
      await store.createPrincipal({ id: PID, username: 'frozen', createdAt: '2030-01-01T00:00:00.000Z', rung: null, aup: null, scopes: [] });
      // Frozen: a call misses its deadline, and the store swaps in a fresh client that cannot connect yet.
      await Promise.all(cluster.servers.map((s) => s.kill('SIGSTOP')));
      expect(await outcome(store.getPrincipal(PID))).to.be.instanceOf(StoreUnavailable);
      // Then gone: the fresh client's first discovery fails outright.
      await Promise.all(cluster.servers.map((s) => s.kill('SIGKILL')));
      expect(await outcome(store.getPrincipal(PID))).to.be.instanceOf(StoreUnavailable);
      // Back, with their data (AOF) and their cluster configuration (nodes.conf).
      await Promise.all(cluster.servers.map((s) => s.restart()));
      await cluster.waitForOk();
      // The client rediscovers the cluster on its own: calls fail until it has.
      const healed = await until(
        async () => {
          const r = await outcome(store.getPrincipal(PID));
          return r instanceof Error ? null : r;
        },
        { what: 'the store to heal after the cluster came back' },
      );
      expect(healed).to.include({ id: PID });
    } finally {
      await store.close();
    }
  });

  it('fails calls at once while every node is down, and heals by itself once they are back', async () => {
    const store = await RedisStore.connect({ clusterNodes: cluster.seeds, commandTimeoutMs: 2000, connectTimeoutMs: 500 });
    try {
      const id = `${PID}-2`;
      await store.createPrincipal({ id, username: 'down', createdAt: '2030-01-01T00:00:00.000Z', rung: null, aup: null, scopes: [] });
      await Promise.all(cluster.servers.map((s) => s.kill('SIGKILL')));
      expect(await outcome(store.getPrincipal(id))).to.be.instanceOf(StoreUnavailable);
      await Promise.all(cluster.servers.map((s) => s.restart()));
      await cluster.waitForOk();
      // The client rediscovers the cluster on its own: calls fail until it has.
      const healed = await until(
        async () => {
          const r = await outcome(store.getPrincipal(id));
          return r instanceof Error ? null : r;
        },
        { what: 'the store to heal after the cluster came back' },
      );
      expect(healed).to.include({ id });
    } finally {
      await store.close();
    }
  });

  it('leaves no connection behind when closed while its client re-learns the cluster', async () => {
    const store = await RedisStore.connect({
      clusterNodes: cluster.seeds,
      commandTimeoutMs: 2000,
      connectTimeoutMs: 500,
      identityCacheEntries: 0,
      replicaAcks: 0,
    });
    const [dead, ...frozen] = cluster.servers as [RedisServer, ...RedisServer[]];
    // Every connection node-redis opens from here on (its clients publish each connect and each deliberate end).
    const started: Array<{ id: unknown; port: number }> = [];
    const open = new Set<unknown>();
    const onStart = (m: unknown) => {
      const { clientId, serverPort } = m as { clientId: unknown; serverPort: number };
      started.push({ id: clientId, port: serverPort });
      open.add(clientId);
    };
    const onClosed = (m: unknown) => {
      const { clientId, reason } = m as { clientId: unknown; reason: string };
      if (reason === 'application_close') open.delete(clientId);
    };
    diagnostics.subscribe('tracing:node-redis:connect:start', onStart);
    diagnostics.subscribe('node-redis:connection:closed', onClosed);
    try {
      await store.createPrincipal({ id: `${PID}-3`, username: 'relearn', createdAt: '2030-01-01T00:00:00.000Z', rung: null, aup: null, scopes: [] });
      // One master dies and the others freeze: once its connection has retried for a while, the client
      // re-learns the slot map from another node, which cannot answer yet.
      await dead.kill('SIGKILL');
      await Promise.all(frozen.map((s) => s.kill('SIGSTOP')));
      const asking = await until(() => started.find((c) => frozen.some((s) => s.port === c.port)), {
        what: 'the client to ask a frozen node for the slot map',
      });
      await store.close();
      const atClose = started.length;
      // The frozen nodes answer: the re-learning, begun before the close, ends after it.
      await Promise.all(frozen.map((s) => s.kill('SIGCONT')));
      await until(() => !open.has(asking.id), { what: 'the re-learning connection to end' });
      await until(() => started.length > atClose, { what: 'node connections opened after the close' });
      await until(() => open.size === 0, { what: 'the connections opened after the close to end' });
    } finally {
      diagnostics.unsubscribe('tracing:node-redis:connect:start', onStart);
      diagnostics.unsubscribe('node-redis:connection:closed', onClosed);
      await Promise.all(frozen.map((s) => s.kill('SIGCONT')));
      await dead.restart();
      await cluster.waitForOk();
      await store.close();
    }
  });
});
