/**
 * Token last-use times in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('tu') on a cluster, store/redis.ts):
 *   tu:<tokenId>   string  ISO-8601 time of the last reported use (only ever moves forward)
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { TokenUsageStore } from './store.js';

const SEEN = loadLua(import.meta.url, 'lua/seen.lua');

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
    const keys = tokenIds.map((id) => `${this.#store.familyPrefix('tu')}tu:${id}`);
    const reply = await this.#store.command('tokenUsage.lastUsed', (c) => c.mGet(keys));
    return reply.map((v) => (v === null ? null : String(v)));
  }
}
