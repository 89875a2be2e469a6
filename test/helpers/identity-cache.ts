/**
 * Reaching behind a gateway's identity cache (src/store/identity-cache.ts): the two Redis set-ups its tests
 * run on (one primary, a three-master cluster), started alike; and its tracking connections, which are
 * named, so a test can find them in CLIENT LIST on any node and kill them, as a network fault or an
 * operator's CLIENT KILL would.
 */
import { createClient } from 'redis';
import { TRACKING_NAME } from '../../src/store/identity-cache.js';
import type { RedisStoreOptions } from '../../src/store/connection.js';
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startRedisCluster, type RedisCluster } from './redis-cluster.js';

/** The Redis set-ups every identity-cache suite runs on: the cache tracks keys differently on each. */
export const IDENTITY_BACKENDS = ['one primary', 'a cluster'] as const;
export type IdentityBackend = (typeof IDENTITY_BACKENDS)[number];

/** A started backend, and how a store or a test gateway reaches it. */
export interface IdentityRedis {
  /** The server, on one primary. */
  readonly server: RedisServer | undefined;
  /** The cluster (three masters, no replica), on a cluster. */
  readonly cluster: RedisCluster | undefined;
  /** Every node's port: where an identity cache may hold tracking connections. */
  readonly ports: number[];
  /** For RedisStore.connect. */
  readonly store: RedisStoreOptions;
  /** For startTestGateway: REDIS_URL on one primary, REDIS_CLUSTER_NODES on a cluster. */
  readonly gateway: { redisUrl?: string; env: Record<string, string> };
  stop(): Promise<void>;
}

/** Starts one redis-server, or a three-master cluster, as `backend` says. */
export async function startIdentityRedis(backend: IdentityBackend): Promise<IdentityRedis> {
  if (backend === 'one primary') {
    const server = await startRedisServer();
    return {
      server,
      cluster: undefined,
      ports: [server.port],
      store: { url: server.url },
      gateway: { redisUrl: server.url, env: {} },
      stop: () => server.stop(),
    };
  }
  const cluster = await startRedisCluster();
  return {
    server: undefined,
    cluster,
    ports: cluster.servers.map((s) => s.port),
    store: { clusterNodes: cluster.seeds },
    gateway: { env: { REDIS_CLUSTER_NODES: cluster.seeds.join(',') } },
    stop: () => cluster.stop(),
  };
}

/** Kills, on every node given, each connection an identity cache opened (CLIENT KILL by id); returns how many. */
export async function killTrackingConnections(ports: number[]): Promise<number> {
  let killed = 0;
  for (const port of ports) {
    const c = createClient({ url: `redis://127.0.0.1:${port}` });
    c.on('error', () => undefined);
    await c.connect();
    try {
      killed += await killOn(c);
    } finally {
      c.destroy();
    }
  }
  return killed;
}

/** Kills the identity-cache connections of the server `c` is connected to, through `c`. */
async function killOn(c: Pick<ReturnType<typeof createClient>, 'sendCommand'>): Promise<number> {
  let killed = 0;
  for (const line of (await c.sendCommand<string>(['CLIENT', 'LIST'])).split('\n')) {
    const id = line.includes(`name=${TRACKING_NAME}`) ? /\bid=(\d+)/.exec(line)?.[1] : undefined;
    if (id) killed += Number(await c.sendCommand(['CLIENT', 'KILL', 'ID', id]));
  }
  return killed;
}

/**
 * Kills a single server's identity-cache connections and keeps them from coming back (maxclients lowered to
 * the connections still open, so every new one is refused) until the returned release is called: the store
 * answers on the gateway's main connection while its identity cache fails closed, as when a restarted Redis
 * has taken one connection back before the other.
 */
export async function holdTrackingConnectionsDown(port: number): Promise<() => Promise<void>> {
  const c = createClient({ url: `redis://127.0.0.1:${port}` });
  c.on('error', () => undefined);
  await c.connect();
  const before = (await c.configGet('maxclients'))['maxclients']!;
  const open = (await c.sendCommand<string>(['CLIENT', 'LIST'])).split('\n').filter((l) => l.trim() !== '');
  const tracking = open.filter((l) => l.includes(`name=${TRACKING_NAME}`)).length;
  if (tracking < 1) throw new Error('no identity-cache connection to hold down');
  // Lowered first, so a reconnect that races the kill is refused too.
  await c.configSet('maxclients', String(open.length - tracking));
  await killOn(c);
  return async () => {
    try {
      await c.configSet('maxclients', before);
    } finally {
      c.destroy();
    }
  };
}
