/**
 * Runs a contract suite against a Redis-backed capability twice: on one private redis-server for the suite,
 * and on a Redis Cluster shared by the run; a fresh key prefix for each store the suite opens keeps its
 * tests from seeing each other's keys. No contract is about the store's deadline (the same suites run on the
 * memory stores), so the stores get one no busy machine reaches: every write waits for its fsync
 * (appendfsync always), and CI runs its lanes on a loaded machine.
 */
import { RedisStore } from '../../src/store/redis.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startRedisCluster, type RedisCluster } from './redis-cluster.js';

const CONTRACT_DEADLINE_MS = 10_000;

export function onRedis(title: string, suite: (connect: () => Promise<RedisStore>) => void): void {
  onPrimary(title, suite);
  // Every Redis contract suite also runs on a cluster: the layout must work on both, with the same code.
  onRedisCluster(`${title}, on a redis cluster`, suite);
}

function onPrimary(title: string, suite: (connect: () => Promise<RedisStore>) => void): void {
  describe(title, () => {
    let redis: RedisServer;
    let n = 0;
    before(async () => {
      redis = await startRedisServer();
    });
    after(() => redis.stop());
    suite(() => RedisStore.connect({ url: redis.url, keyPrefix: `c${n++}:`, commandTimeoutMs: CONTRACT_DEADLINE_MS }));
  });
}

/** One cluster per test process, shared by every suite (each store has its own prefix, hence its own slot). */
let shared: Promise<RedisCluster> | null = null;

/** The run's shared cluster, started on first use (allow it a minute), stopped once the run's suites are done. */
export function sharedCluster(): Promise<RedisCluster> {
  shared ??= startRedisCluster();
  return shared;
}
// A root hook (this module is first imported while mocha loads the test files, at the root): the run's
// last step stops the cluster, so neither its processes nor its clients outlive the run.
if (typeof after === 'function') {
  after(async () => {
    if (shared) await (await shared).stop();
  });
}

/**
 * The same, against a real Redis Cluster (three masters, test/helpers/redis-cluster.ts) through the store's
 * cluster client: the suite's scripts must all be single-slot and reach the right master. The cluster is
 * started once for the whole run (it costs seconds) and stopped after the last suite; each store's prefix
 * is a different hash tag, so suites spread over the three masters.
 */
export function onRedisCluster(title: string, suite: (connect: () => Promise<RedisStore>) => void): void {
  describe(title, () => {
    let cluster: RedisCluster;
    before(async function () {
      this.timeout(60_000);
      cluster = await sharedCluster();
    });
    suite(() => RedisStore.connect({ clusterNodes: cluster.seeds, keyPrefix: `k${clusterStores++}:`, commandTimeoutMs: CONTRACT_DEADLINE_MS }));
  });
}
let clusterStores = 0;
