/**
 * Token last-use times in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('tu') on a cluster, store/redis.ts):
 *   tu:<tokenId>   string  ISO-8601 time of the last reported use (only ever moves forward)
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import type { TokenUsageStore } from './store.js';

// KEYS usage  ARGV at   (ISO-8601 strings of one format compare in time order)
const SEEN = luaScript(`
local held = redis.call('GET', KEYS[1])
if not held or held < ARGV[1] then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`);

// KEYS usage...
const LAST = luaScript(`
if #KEYS == 0 then return {} end
return redis.call('MGET', unpack(KEYS))`);

export class RedisTokenUsageStore implements TokenUsageStore {
  readonly #store: RedisStore;

  constructor(store: RedisStore) {
    this.#store = store;
  }

  async seen(tokenId: string, at: string): Promise<void> {
    await this.#store.runScript('tokenUsage.seen', SEEN, [`${this.#store.familyPrefix('tu')}tu:${tokenId}`], [at]);
  }

  async lastUsed(tokenIds: string[]): Promise<Array<string | null>> {
    if (tokenIds.length === 0) return [];
    const reply = (await this.#store.runScript('tokenUsage.lastUsed', LAST, tokenIds.map((id) => `${this.#store.familyPrefix('tu')}tu:${id}`), [])) as Array<string | null>;
    return reply.map((v) => v ?? null);
  }
}
