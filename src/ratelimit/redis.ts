/**
 * Rate limits in Redis, on the store's connection (its deadlines; when Redis is down the request fails
 * closed with 503 store-unavailable like every other). Layout under the store's prefix:
 *   rl:{<name>:<subject>}:<windowMs>:<window>   string  hits in that fixed window, expiring two windows after
 *                                               its first hit
 * The subject is hashed (no address or principal id in key names); the braces keep a subject's two windows
 * in one cluster slot. One script a hit (lua/hit.lua): read both windows (one MGET), decide, count.
 */
import { createHash } from 'node:crypto';
import { boundedMemo } from '../bounded-memo.js';
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { decide, windows, type RateLimiter, type Verdict } from './limiter.js';

const HIT = loadLua(import.meta.url, 'lua/hit.lua');

/** Recent subjects' key tags: a principal or an address is limited again and again, and its tag never changes. */
const tagOf = boundedMemo(10_000, (id) => createHash('sha256').update(id).digest('base64url').slice(0, 22));
const subjectTag = (name: string, subject: string): string => tagOf(`${name}\u0000${subject}`);

export class RedisRateLimiter implements RateLimiter {
  readonly #store: RedisStore;
  readonly #now: () => number;

  constructor(store: RedisStore, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  async hit(name: string, subject: string, limit: number, windowMs: number, cost = 1): Promise<Verdict> {
    const { current, elapsedMs } = windows(this.#now(), windowMs);
    const tag = subjectTag(name, subject);
    // One subject's two windows share a slot; on a cluster, subjects spread over every slot (store/redis.ts).
    const prefix = this.#store.principalPrefix('rl', tag);
    const key = (w: number) => `${prefix}rl:${tag}:${windowMs}:${w}`;
    const [allowed, cur, prev] = (await this.#store.runScript(
      'ratelimit.hit',
      HIT,
      [key(current), key(current - 1)],
      [String(limit), String(windowMs), String(elapsedMs), String(cost)],
    )) as [number, number, number];
    if (allowed === 1) return { allowed: true, retryAfterMs: 0 };
    // The script refused; the wait comes from the same counts (the same arithmetic, so it agrees).
    const v = decide(prev, cur, elapsedMs, limit, windowMs, cost);
    return { allowed: false, retryAfterMs: Math.max(1, v.retryAfterMs) };
  }
}
