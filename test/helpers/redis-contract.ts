/**
 * Runs a contract suite against a Redis-backed capability: one private redis-server for the suite, and a
 * fresh key prefix for each store the suite opens, so its tests never see each other's keys.
 */
import { RedisStore } from '../../src/store/redis.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

export function onRedis(title: string, suite: (connect: () => Promise<RedisStore>) => void): void {
  describe(title, () => {
    let redis: RedisServer;
    let n = 0;
    before(async () => {
      redis = await startRedisServer();
    });
    after(() => redis.stop());
    suite(() => RedisStore.connect({ url: redis.url, keyPrefix: `c${n++}:` }));
  });
}
