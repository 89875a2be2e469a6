/**
 * A real, private Redis Cluster for tests: three masters (and, when asked, one replica each), every node a
 * `redis-server --cluster-enabled yes` of test/helpers/redis-server.ts on its own free ports, joined with
 * `redis-cli --cluster create`. It resolves once every node sees all 16384 slots served (`cluster_state:ok`)
 * and every replica has synced, so a test starts on a cluster a gateway would accept.
 *
 * The node timeout is short (1 s) so a killed master's replica is promoted within seconds, not the 15 s
 * default: the failover test waits for that promotion, and the suites stay quick.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startRedisServer, type RedisServer } from './redis-server.js';

const run = promisify(execFile);

export const NODE_TIMEOUT_MS = 1000;
const READY_TIMEOUT_MS = 30_000;

export interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** The master a replica follows; null for a master. */
  masterId: string | null;
  /** Slot ranges a master serves, as [from, to] inclusive. */
  slots: Array<[number, number]>;
  failed: boolean;
}

export interface RedisCluster {
  /** Every node started, masters first. */
  readonly servers: RedisServer[];
  /** `127.0.0.1:<port>` of every node, the value of REDIS_CLUSTER_NODES. */
  readonly seeds: string[];
  /** Runs a command on one node through redis-cli, returns its raw reply text. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** The topology as the node on `port` sees it (CLUSTER NODES). */
  nodes(port?: number): Promise<ClusterNode[]>;
  /** The server that is, right now, the master of the key's slot. */
  masterOf(key: string): Promise<RedisServer>;
  /** The replica of that master (clusters started with replicas). */
  replicaOf(master: RedisServer): Promise<RedisServer>;
  /** Resolves once every live node sees `cluster_state:ok` (after a restart of nodes). */
  waitForOk(): Promise<void>;
  /** Resolves once the node on `port` is a master, and every live node sees the cluster ok. */
  waitForPromotion(port: number): Promise<void>;
  /** Resolves once the node on `port` (a master restarted after a failover) is a replica with its link up. */
  waitForReplicaInSync(port: number): Promise<void>;
  stop(): Promise<void>;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

function parseNodes(text: string): ClusterNode[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((line) => {
      const [id = '', address = '', flags = '', masterId = '-', , , , , ...slots] = line.trim().split(' ');
      const port = Number(address.split('@')[0]?.split(':').pop());
      const flagSet = new Set(flags.split(','));
      return {
        id,
        port,
        role: flagSet.has('master') ? ('master' as const) : ('replica' as const),
        masterId: masterId === '-' ? null : masterId,
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [from, to = from] = s.split('-').map(Number);
            return [from!, to!] as [number, number];
          }),
        failed: flagSet.has('fail') || flagSet.has('fail?'),
      };
    });
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err; // a node still starting or just killed: ask again
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis cluster: ${what} not reached in ${READY_TIMEOUT_MS} ms${last ? ` (${(last as Error).message})` : ''}`);
}

export async function startRedisCluster(options: { replicas?: 0 | 1 } = {}): Promise<RedisCluster> {
  const replicas = options.replicas ?? 0;
  const count = 3 * (1 + replicas);
  const servers = await Promise.all(Array.from({ length: count }, () => startRedisServer({ clusterNodeTimeoutMs: NODE_TIMEOUT_MS })));
  const seeds = servers.map((s) => `127.0.0.1:${s.port}`);
  const stop = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  const alive = async (s: RedisServer): Promise<boolean> => (await cli(s.port, 'PING').catch(() => '')).trim() === 'PONG';
  try {
    // redis-cli gives the first three nodes the slots and makes the rest their replicas, one each.
    await run('redis-cli', ['--cluster', 'create', ...seeds, '--cluster-replicas', String(replicas), '--cluster-yes'], { timeout: 30_000 });
    await until('every node sees cluster_state:ok and every replica in sync', async () => {
      for (const s of servers) {
        if (!(await cli(s.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
        const topology = parseNodes(await cli(s.port, 'CLUSTER', 'NODES'));
        if (topology.filter((n) => n.role === 'replica').length !== 3 * replicas) return false;
      }
      for (const s of servers.slice(3)) {
        if (!(await cli(s.port, 'INFO', 'replication')).includes('master_link_status:up')) return false;
      }
      return true;
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const anyLive = async (): Promise<RedisServer> => {
    for (const s of servers) if (await alive(s)) return s;
    throw new Error('redis cluster: no node answers');
  };
  const cluster: RedisCluster = {
    servers,
    seeds,
    cli,
    async nodes(port) {
      return parseNodes(await cli(port ?? (await anyLive()).port, 'CLUSTER', 'NODES'));
    },
    async masterOf(key) {
      const probe = await anyLive();
      const slot = Number((await cli(probe.port, 'CLUSTER', 'KEYSLOT', key)).trim());
      const master = (await cluster.nodes(probe.port)).find(
        (n) => n.role === 'master' && !n.failed && n.slots.some(([from, to]) => slot >= from && slot <= to),
      );
      const server = servers.find((s) => s.port === master?.port);
      if (!server) throw new Error(`redis cluster: no master serves slot ${slot}`);
      return server;
    },
    async replicaOf(master) {
      const topology = await cluster.nodes(master.port);
      const id = topology.find((n) => n.port === master.port)?.id;
      const replica = servers.find((s) => s.port === topology.find((n) => n.masterId === id)?.port);
      if (!replica) throw new Error(`redis cluster: the master on ${master.port} has no replica`);
      return replica;
    },
    async waitForOk() {
      await until('cluster ok again', async () => {
        for (const s of servers) {
          if (!(await alive(s))) continue;
          if (!(await cli(s.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
        }
        return true;
      });
    },
    async waitForPromotion(port) {
      await until(`node ${port} promoted, cluster ok`, async () => {
        const me = (await cluster.nodes(port)).find((n) => n.port === port);
        if (me?.role !== 'master' || me.slots.length === 0) return false;
        for (const s of servers) {
          if (!(await alive(s))) continue;
          if (!(await cli(s.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
        }
        return true;
      });
    },
    async waitForReplicaInSync(port) {
      await until(`node ${port} a replica in sync`, async () => {
        const me = (await cluster.nodes(port)).find((n) => n.port === port);
        if (me?.role !== 'replica') return false;
        return (await cli(port, 'INFO', 'replication')).includes('master_link_status:up');
      });
    },
    stop,
  };
  return cluster;
}
