/**
 * Challenges in one process, beside the memory store: the Redis challenge store's semantics (contract suite
 * in test/challenges/contract.test.ts). Expired entries are dropped when met and by a sweep on each put, so
 * a stream of abandoned ceremonies cannot grow the map without bound.
 */
import { ChallengeExists, type Challenge, type ChallengePurpose, type ChallengeStore } from './store.js';

export class MemoryChallengeStore implements ChallengeStore {
  readonly #held = new Map<string, Challenge>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async put(challenge: Challenge): Promise<void> {
    const now = this.#now();
    for (const [key, c] of this.#held) if (Date.parse(c.expiresAt) <= now) this.#held.delete(key);
    const key = `${challenge.purpose}\u0000${challenge.value}`;
    if (this.#held.has(key)) throw new ChallengeExists();
    this.#held.set(key, { ...challenge });
  }

  async take(purpose: ChallengePurpose, value: string): Promise<Challenge | null> {
    const key = `${purpose}\u0000${value}`;
    const c = this.#held.get(key);
    if (!c) return null;
    this.#held.delete(key);
    return Date.parse(c.expiresAt) > this.#now() ? { ...c } : null;
  }
}
