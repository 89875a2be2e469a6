/**
 * Challenges in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('ch') on a cluster, store/redis.ts):
 *   ch:<kind>:<key>   string  the challenge JSON; PX until its end (plus a minute of slack for clock skew)
 * `put` is SET NX; `take` is GETDEL: of two instances taking the same challenge, one gets it.
 */
import type { RedisStore } from '../store/redis.js';
import type { ChallengeStore, StoredChallenge } from './store.js';

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
    const k = this.#key(kind, key);
    const set = await this.#store.command('challenges.put', (c) =>
      c.set(k, JSON.stringify(challenge), { condition: 'NX', expiration: { type: 'PX', value: ttl } }),
    );
    return set !== null;
  }

  async take<T>(kind: string, key: string, now: number): Promise<StoredChallenge<T> | null> {
    const held = await this.#store.command('challenges.take', (c) => c.getDel(this.#key(kind, key)));
    if (!held) return null;
    const c = JSON.parse(String(held)) as StoredChallenge<T>;
    return now < c.expiresAt ? c : null;
  }
}
