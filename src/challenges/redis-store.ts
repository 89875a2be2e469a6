/**
 * Challenges in Redis, beside the store's keys and on its connection. Layout under the store's prefix:
 *   ch:<purpose>:<value>   string  the challenge JSON, with a TTL that ends at its expiry (SET NX PX)
 * Taking is GETDEL: one atomic step, so a nonce can be redeemed once across every instance. The TTL is
 * Redis' own, and the expiry is checked again on take, so a challenge is never good past `expiresAt`
 * whatever the rounding.
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import { ChallengeExists, type Challenge, type ChallengePurpose, type ChallengeStore } from './store.js';

// KEYS challenge  ARGV json, ttl ms
const PUT = luaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0`);

// KEYS challenge
const TAKE = luaScript(`return redis.call('GETDEL', KEYS[1])`);

export class RedisChallengeStore implements ChallengeStore {
  readonly #store: RedisStore;
  readonly #now: () => number;

  constructor(store: RedisStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  #key(purpose: ChallengePurpose, value: string): string {
    return `${this.#store.keyPrefix}ch:${purpose}:${value}`;
  }

  async put(challenge: Challenge): Promise<void> {
    const ttl = Math.max(1, Date.parse(challenge.expiresAt) - this.#now());
    const ok = await this.#store.runScript('challenges.put', PUT, [this.#key(challenge.purpose, challenge.value)], [
      JSON.stringify(challenge),
      String(ttl),
    ]);
    if (ok !== 1) throw new ChallengeExists();
  }

  async take(purpose: ChallengePurpose, value: string): Promise<Challenge | null> {
    const raw = await this.#store.runScript('challenges.take', TAKE, [this.#key(purpose, value)], []);
    if (typeof raw !== 'string') return null;
    const c = JSON.parse(raw) as Challenge;
    return Date.parse(c.expiresAt) > this.#now() ? c : null;
  }
}
