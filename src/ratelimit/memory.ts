/** Rate limits in this process, for the memory store (one gateway process): the same windows as Redis. */
import { decide, windows, type RateLimiter, type Verdict } from './limiter.js';

export class MemoryRateLimiter implements RateLimiter {
  readonly #counts = new Map<string, number>();
  readonly #now: () => number;
  #swept = 0;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async hit(name: string, subject: string, limit: number, windowMs: number, cost = 1): Promise<Verdict> {
    const now = this.#now();
    const { current, elapsedMs } = windows(now, windowMs);
    const key = (w: number) => `${name}\u0000${windowMs}\u0000${subject}\u0000${w}`;
    const cur = this.#counts.get(key(current)) ?? 0;
    const prev = this.#counts.get(key(current - 1)) ?? 0;
    const verdict = decide(prev, cur, elapsedMs, limit, windowMs, cost);
    if (verdict.allowed && cost > 0) this.#counts.set(key(current), cur + cost);
    this.#sweep(now, windowMs);
    return verdict;
  }

  /** Drops windows older than the previous one, at most once a window, so the map stays bounded. */
  #sweep(now: number, windowMs: number): void {
    if (now - this.#swept < windowMs) return;
    this.#swept = now;
    for (const k of this.#counts.keys()) {
      const parts = k.split('\u0000');
      const w = Number(parts[3]);
      const size = Number(parts[1]);
      if (w < Math.floor(now / size) - 1) this.#counts.delete(k);
    }
  }
}
