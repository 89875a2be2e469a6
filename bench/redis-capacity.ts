/**
 * How far one Redis primary goes, and how a cluster spreads the same work: the Redis side of a paid call
 * driven straight through the store and the meter (no gateway, no upstream, so Redis is the bottleneck
 * sooner), against a private redis-server with the durability we recommend (AOF, `appendfsync always`) and
 * then against a private three-master Redis Cluster. One call is what the gateway asks Redis for a call:
 *
 *   identify   token hash -> token -> principal (identity family)
 *   seen       the token's last-use time (token-usage family)
 *   reserve    the hold against credits (money family)
 *   settle     the charge, the receipt and its leaf in the receipt log (money family)
 *
 * (The gateway also opens and closes the call's job in the reserve and settle scripts: larger
 * scripts in the same slot, not more of them.) Reported: calls per second at the given concurrency, the
 * driving process's CPU per call (the Redis client's share of a gateway's CPU), and each Redis node's CPU
 * per call (INFO cpu, user + sys) — which node a cluster loads, and by how much.
 *
 *   npx tsx bench/redis-capacity.ts [seconds per run, default 8] [concurrency, default 64]
 *
 * On a shared machine the figures move by tens of per cent; the split between nodes is the stable part.
 */
import { execFileSync } from 'node:child_process';
import { RedisStore } from '../src/store/redis.js';
import { RedisMeter } from '../src/metering/redis-meter.js';
import { RedisTokenUsageStore } from '../src/token-usage/redis-store.js';
import type { Reservation } from '../src/metering/meter.js';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { startRedisCluster } from '../test/helpers/redis-cluster.js';

const SECONDS = Number(process.argv[2] ?? 8);
const CONCURRENCY = Number(process.argv[3] ?? 64);
const PRINCIPALS = 500;
const RATES = { inputPerMTok: 900_000, cachedInputPerMTok: 225_000, outputPerMTok: 4_500_000 };

function cpuSeconds(port: number): number {
  const info = execFileSync('redis-cli', ['-p', String(port), 'INFO', 'cpu'], { encoding: 'utf8' });
  const field = (name: string) => Number(new RegExp(`${name}:([0-9.]+)`).exec(info)?.[1] ?? 0);
  return field('used_cpu_user') + field('used_cpu_sys');
}

async function drive(label: string, store: RedisStore, ports: number[]): Promise<void> {
  const meter = new RedisMeter(store, {});
  const usage = new RedisTokenUsageStore(store);
  const at = new Date().toISOString();
  for (let i = 0; i < PRINCIPALS; i++) {
    const id = `did:web:bench.test:tenant:p${i}`;
    await store.createPrincipal({ id, username: `p${i}`, createdAt: at, rung: null, aup: null, scopes: [] });
    await store.putToken({ id: `tok_${i}`, principalId: id, label: 'bench', format: 'v2', hash: `hash-${i}`, createdAt: at, revokedAt: null });
    await meter.grant({ operationId: `op-${i}`, principalId: id, kind: 'credits', microUSD: 1e12, source: 'bench' });
  }
  let seq = 0;
  const call = async (): Promise<void> => {
    const n = seq++;
    const i = n % PRINCIPALS;
    const identity = await store.identify(`hash-${i}`);
    if (!identity) throw new Error('bench principal not found');
    await usage.seen(identity.token.id, new Date().toISOString());
    const r: Reservation = await meter.reserve({
      callId: `call-${process.pid}-${n}`,
      principalId: identity.principal.id,
      model: 'shared-general-a',
      task: 'code-review',
      estimatedTokens: 100,
      maxOutputTokens: 90,
      rates: RATES,
      ttlMs: 600_000,
      limits: { free: { perDay: 0, unit: 'requests' }, rung: null },
    });
    await meter.settle(r, { usage: { prompt_tokens: 10, completion_tokens: 90, total_tokens: 100, cached_tokens: 0 }, chargeable: true }, (s) => ({
      id: `rcpt_${r.callId}`,
      callId: r.callId,
      principalId: r.principalId,
      createdAt: new Date().toISOString(),
      outcome: 'answered',
      billing: s.billing,
      chargedMicroUSD: s.chargedMicroUSD,
      usage: s.usage,
    }));
  };
  const cpuBefore = ports.map(cpuSeconds);
  const clientBefore = process.cpuUsage();
  const started = Date.now();
  const end = started + SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        await call();
        done += 1;
      }
    }),
  );
  const elapsed = (Date.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const cpu = ports.map((p, k) => cpuSeconds(p) - cpuBefore[k]!);
  const total = cpu.reduce((a, b) => a + b, 0);
  console.log(
    `${label}: ${Math.round(done / elapsed)} calls/s (${done} calls, concurrency ${CONCURRENCY}), client ${((client.user + client.system) / done).toFixed(0)} µs CPU per call`,
  );
  ports.forEach((p, k) => {
    const share = total > 0 ? Math.round((100 * cpu[k]!) / total) : 0;
    console.log(`  node :${p}  ${((1e6 * cpu[k]!) / done).toFixed(0)} µs CPU per call  (${share} % of the Redis CPU)`);
  });
  console.log(
    `  all nodes: ${((1e6 * total) / done).toFixed(0)} µs Redis CPU per call -> one core saturates near ${Math.round(done / Math.max(...cpu))} calls/s on the busiest node`,
  );
}

const primary = await startRedisServer();
try {
  const store = await RedisStore.connect({ url: primary.url });
  await drive('one primary', store, [primary.port]);
  await store.close();
} finally {
  await primary.stop();
}

const cluster = await startRedisCluster();
try {
  const store = await RedisStore.connect({ clusterNodes: cluster.seeds });
  await drive(
    'three-master cluster',
    store,
    cluster.servers.map((s) => s.port),
  );
  await store.close();
} finally {
  await cluster.stop();
}
process.exit(0);
