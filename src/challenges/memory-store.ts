/** Challenges in one process (contract suite in test/challenges/contract.test.ts). */
import type { ChallengeStore, StoredChallenge } from './store.js';

export class MemoryChallengeStore implements ChallengeStore {
  readonly #items = new Map<string, string>();

  async put(kind: string, key: string, challenge: StoredChallenge, now: number): Promise<boolean> {
    const k = `${kind}:${key}`;
    if (this.#items.has(k)) return false;
    this.#items.set(k, JSON.stringify(challenge));
    // Keep the map small: drop what is dead while we are here.
    if (this.#items.size % 256 === 0) {
      for (const [key2, v] of this.#items) if ((JSON.parse(v) as StoredChallenge).expiresAt <= now) this.#items.delete(key2);
    }
    return true;
  }

  async take<T>(kind: string, key: string, now: number): Promise<StoredChallenge<T> | null> {
    const k = `${kind}:${key}`;
    const held = this.#items.get(k);
    if (held === undefined) return null;
    this.#items.delete(k);
    const c = JSON.parse(held) as StoredChallenge<T>;
    return now < c.expiresAt ? c : null;
  }
}
