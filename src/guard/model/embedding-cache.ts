/**
 * The embeddings the intent model made lately, by reading. A chat conversation sends its whole history again
 * on every call, so the windows of its earlier turns (readings.ts) come back call after call; an evaluation
 * reads each prompt as a red-team and as a blue-team call. A reading found here is not embedded again: the
 * encoder (pool.ts) costs milliseconds of a core per reading, a look-up one hash of at most `readingChars`
 * characters.
 *
 *  - Per scope: a hit answers sooner than a miss, so a cache shared by every caller would let one learn
 *    whether another had sent a text lately by timing a call with it. The gateway scopes the cache by
 *    principal (src/stages/scan.ts): a conversation's later calls still hit, another principal's never do.
 *  - Keyed by the SHA-256 of the scope and the exact reading text, never the text: the cache holds no prompt contents (only
 *    their embeddings, as the head's input holds them anyway), and a key is 44 characters whatever the
 *    reading's length. SHA-256, not a faster hash: a collision would give one reading another's embedding,
 *    and one must not be makeable on purpose (a harmful ask read as a benign one).
 *  - Bounded by entries (`cacheEntries`), the least recently used dropped first: a Map keeps insertion order,
 *    and a hit is moved to its end. An entry is a 384-number Float32Array (1,536 bytes) with its key and the
 *    Map's slot, about 1.75 KiB in all (docs/guardrails.md has the measure); 0 keeps nothing.
 *  - Only what the encoder returned is stored (`put` after a job succeeded): a reading that failed or timed
 *    out is asked of the encoder again by the next call that needs it.
 *
 * The vectors are shared between the calls that read them, so nothing may write into them (the head only
 * reads its input).
 */
import { hash } from 'node:crypto';

/** Readings the intent models of this process took from their caches and from the encoder (for /metrics). */
export const embeddingTotals = { cached: 0, encoded: 0 };

export class EmbeddingCache {
  private readonly map = new Map<string, Float32Array>();
  /** The encoder weights (sha256) whose embeddings this holds: a cache shared by models is one encoder's. */
  private encoder: string | undefined;

  constructor(readonly entries: number) {
    if (!(Number.isInteger(entries) && entries >= 0)) throw new Error('intentModel.cacheEntries must be a whole number, 0 or more (0 turns the cache off)');
  }

  /** Ties the cache to the encoder weights `sha256`; a model of other weights must not read it. */
  bind(sha256: string): void {
    if (this.encoder !== undefined && this.encoder !== sha256) {
      throw new Error(`intent model: an embedding cache of encoder weights ${this.encoder} shared with a model of ${sha256}`);
    }
    this.encoder = sha256;
  }

  /** The key of a reading in a scope (their digest); null when the cache is off, so nothing is hashed. */
  key(scope: string, reading: string): string | null {
    // The scope's length first, so no scope and reading can be read as another scope and reading.
    return this.entries > 0 ? hash('sha256', `${scope.length}:${scope}${reading}`, 'base64') : null;
  }

  /** The embedding stored under `key`, made the most recently used; undefined when there is none. */
  get(key: string | null): Float32Array | undefined {
    if (key === null) return undefined;
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  /** Stores an embedding the encoder returned, dropping the least recently used past the bound. */
  put(key: string | null, vector: Float32Array): void {
    if (key === null) return;
    this.map.delete(key);
    this.map.set(key, vector);
    if (this.map.size > this.entries) this.map.delete(this.map.keys().next().value!);
  }
}
