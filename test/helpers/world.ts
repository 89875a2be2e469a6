/**
 * The usual world of an API test: a real redis-server, the recording upstream process, and a gateway on
 * both, started once per suite. `fresh()` between tests resets the upstream's recording and behaviour.
 */
import { startRedisServer, type RedisServer } from './redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from './upstream.js';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.js';

export interface World {
  redis: RedisServer;
  upstream: RecordingUpstream;
  gw: TestGateway;
  stop(): Promise<void>;
}

export async function startWorld(opts: Omit<TestGatewayOptions, 'upstreamUrl' | 'redisUrl'> = {}): Promise<World> {
  const [redis, upstream] = await Promise.all([startRedisServer(), startRecordingUpstream()]);
  const gw = await startTestGateway({ ...opts, upstreamUrl: upstream.baseUrl, redisUrl: redis.url });
  return {
    redis,
    upstream,
    gw,
    async stop() {
      await gw.close();
      await Promise.all([upstream.stop(), redis.stop()]);
    },
  };
}

/** Every receipt in the world's Redis (store key layout `pc:r:<id>`, see src/store/redis.ts). */
export async function allReceipts(w: World): Promise<Array<Record<string, any>>> {
  const { createClient } = await import('redis');
  const c = createClient({ url: w.redis.url });
  await c.connect();
  try {
    const keys = await c.keys('pc:r:*');
    const values = keys.length ? await c.mGet(keys) : [];
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as Record<string, any>);
  } finally {
    await c.close();
  }
}

/** The principal ids of every job in the world's Redis (job layout `pc:j:<id>`, see src/jobs/redis-store.ts). */
export async function jobOwners(w: World): Promise<string[]> {
  const { createClient } = await import('redis');
  const c = createClient({ url: w.redis.url });
  await c.connect();
  try {
    const keys = await c.keys('pc:j:*');
    const docs = await Promise.all(keys.map((k) => c.hGet(k, 'doc')));
    return docs.filter((d): d is string => typeof d === 'string').map((d) => (JSON.parse(d) as { principalId: string }).principalId);
  } finally {
    await c.close();
  }
}
