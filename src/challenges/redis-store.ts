/**
 * Challenges in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('ch') on a cluster, store/redis.ts):
 *   ch:<kind>:<key>   string  the challenge JSON; PX until its end (plus a minute of slack for clock skew)
 * `put` is SET NX; `take` is GETDEL: of two instances taking the same challenge, one gets it.
 */
import type { RedisStore } from '../store/redis.js';
import { luaScript } from '../store/redis.js';
import type { ChallengeStore, StoredChallenge } from './store.js';

// KEYS challenge  ARGV json, ttlMs
const PUT = luaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`);

// KEYS challenge
const TAKE = luaScript(`return redis.call('GETDEL', KEYS[1])`);

export class RedisChallengeStore implements ChallengeStore {
  readonly #store: RedisStore;

  constructor(store: RedisStore) {
    this.#store = store;
  }

  #key(kind: string, key: string): string {
    return `${this.#store.familyPrefix('ch')}ch:${kind}:${key}`;
  }

  async put(kind: string, key: string, challenge: StoredChallenge, now: number): Promise<boolean> {
    const ttl = Math.max(1, challenge.expiresAt - now) + 60_000;
    return (await this.#store.runScript('challenges.put', PUT, [this.#key(kind, key)], [JSON.stringify(challenge), String(ttl)])) === 1;
  }

  async take<T>(kind: string, key: string, now: number): Promise<StoredChallenge<T> | null> {
    const held = (await this.#store.runScript('challenges.take', TAKE, [this.#key(kind, key)], [])) as string | null;
    if (!held) return null;
    const c = JSON.parse(held) as StoredChallenge<T>;
    return now < c.expiresAt ? c : null;
  }
}
