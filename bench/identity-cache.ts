/**
 * What the identity cache (src/store/identity-cache.ts) saves per identify, in-process against a private
 * redis-server: a token and its principal identified 5,000 times, 16 at a time, by a store with the cache
 * off (one identify script a call) and one with it on (the fence, then memory), three interleaved rounds.
 * Reported per identify: the CPU this process spent (the gateway's share) and the CPU Redis spent (INFO cpu,
 * user + sys).
 *
 *   npx tsx bench/identity-cache.ts
 *
 * On a shared machine the figures move by tens of per cent; compare the two rows of one round.
 */
import { createClient } from 'redis';
import { RedisStore } from '../src/store/redis.js';
import { startRedisServer } from '../test/helpers/redis-server.js';

const CALLS = 5000;
const CONCURRENCY = 16;
const HASH = 'b'.repeat(64);
const PID = 'did:web:bench.localhost:tenant:identity-cache';

const server = await startRedisServer();
const info = createClient({ url: server.url });
await info.connect();
const redisCpuMs = async (): Promise<number> => {
  const text = await info.sendCommand<string>(['INFO', 'cpu']);
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(text)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1000;
};
const setup = await RedisStore.connect({ url: server.url, identityCacheEntries: 0 });
try {
  const at = '2030-01-01T00:00:00.000Z';
  await setup.createPrincipal({
    id: PID,
    username: 'bench',
    createdAt: at,
    rung: null,
    aup: null,
    scopes: [{ id: 'owned', status: 'approved', tasks: ['code-review'], approvedAt: at }],
  });
  await setup.putToken({ id: 'tok_bench', principalId: PID, label: 'bench', format: 'v2', hash: HASH, createdAt: at, revokedAt: null });
  for (const round of [1, 2, 3]) {
    for (const entries of [0, 50_000]) {
      const store = await RedisStore.connect({ url: server.url, identityCacheEntries: entries });
      try {
        for (let i = 0; i < 500; i++) await store.identify(HASH); // warm: scripts loaded, cache filled
        const redis0 = await redisCpuMs();
        const cpu0 = process.cpuUsage();
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            for (let i = 0; i < CALLS / CONCURRENCY; i++) await store.identify(HASH);
          }),
        );
        const cpu = process.cpuUsage(cpu0);
        const redis = (await redisCpuMs()) - redis0;
        const perCall = (us: number) => `${(us / CALLS).toFixed(1)} µs`;
        process.stdout.write(
          `round ${round}, cache ${entries > 0 ? 'on ' : 'off'}: ${perCall(cpu.user + cpu.system)} of this process's CPU, ${perCall(redis * 1000)} of Redis CPU per identify\n`,
        );
      } finally {
        await store.close();
      }
    }
  }
} finally {
  await setup.close();
  info.destroy();
  await server.stop();
}
