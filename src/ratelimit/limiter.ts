/**
 * Rate limits shared by every gateway instance: a counter per subject (a principal, a
 * client address) and limit name, kept in the store so that N instances behind a balancer enforce one limit,
 * not N. The window slides: the count is the current minute's hits plus the previous minute's weighted by how
 * much of it is still inside the last 60 s (the approximation Cloudflare and Redis' own docs describe), which
 * needs two counters a subject and no per-hit log, and never lets a client double its rate across a window
 * edge as a fixed window does.
 *
 * Implementations: redis.ts (one script a hit, on the store's connection) and memory.ts (this process); one
 * contract suite holds both to the same answers (test/ratelimit/contract.test.ts).
 */

export interface Verdict {
  allowed: boolean;
  /** When refused: how long until one more hit would be allowed (ms, at least 1). 0 when allowed. */
  retryAfterMs: number;
}

export interface RateLimiter {
  /**
   * Counts `cost` hits (1 by default; 0 only checks) against `subject` under limit `name`, unless that would
   * pass `limit` in the sliding window of `windowMs` — then nothing is counted and the verdict says when to
   * retry. Atomic across instances.
   */
  hit(name: string, subject: string, limit: number, windowMs: number, cost?: number): Promise<Verdict>;
}

/** The two fixed windows a sliding window is made of, at `now`. */
export function windows(now: number, windowMs: number): { current: number; elapsedMs: number } {
  return { current: Math.floor(now / windowMs), elapsedMs: now % windowMs };
}

/**
 * The decision both implementations share, from the two counters: allowed when the weighted count plus
 * `cost` stays within `limit`; otherwise the wait until it would.
 */
export function decide(previous: number, current: number, elapsedMs: number, limit: number, windowMs: number, cost: number): Verdict {
  const weighted = (previous * (windowMs - elapsedMs)) / windowMs + current;
  if (weighted + cost <= limit) return { allowed: true, retryAfterMs: 0 };
  const room = limit - current - cost;
  let wait: number;
  if (room >= 0 && previous > 0) {
    // The previous window's weight fades linearly: wait until it has faded enough, within this window.
    wait = windowMs - elapsedMs - (room * windowMs) / previous;
  } else {
    // This window alone is over: in the next one, this window's count fades the same way.
    const nextRoom = limit - cost;
    const fade = current > 0 && nextRoom >= 0 ? windowMs - (nextRoom * windowMs) / current : windowMs;
    wait = windowMs - elapsedMs + Math.max(0, fade);
  }
  return { allowed: false, retryAfterMs: Math.max(1, Math.ceil(wait)) };
}
