/**
 * When each personal access token was last used, for the person's token list ("last used" helps them
 * find a token an agent no longer uses). Kept apart from the token records so the call path stays as it
 * is: identify reports a use without waiting, at most once a minute per token per process
 * (`UsageRecorder`), so the figure is accurate to about a minute and costs nothing measurable per call.
 *
 * Implementations: redis-store.ts and memory-store.ts; one contract suite (test/token-usage/contract.test.ts).
 */

export interface TokenUsageStore {
  /** Records a use at `at` (ISO-8601); an earlier time never overwrites a later one. */
  seen(tokenId: string, at: string): Promise<void>;
  /** The last use of each token id, null for never; in the order asked. */
  lastUsed(tokenIds: string[]): Promise<Array<string | null>>;
}

/** Reports uses to the store at most once per `everyMs` per token, without making the caller wait. */
export class UsageRecorder {
  readonly #store: TokenUsageStore;
  readonly #everyMs: number;
  readonly #reported = new Map<string, number>();

  constructor(store: TokenUsageStore, everyMs = 60_000) {
    this.#store = store;
    this.#everyMs = everyMs;
  }

  get store(): TokenUsageStore {
    return this.#store;
  }

  used(tokenId: string, now: number): void {
    const last = this.#reported.get(tokenId);
    if (last !== undefined && now - last < this.#everyMs) return;
    if (this.#reported.size >= 10_000) this.#reported.delete(this.#reported.keys().next().value!);
    this.#reported.set(tokenId, now);
    // A failed report only makes "last used" older; the call it came from is not held up or failed by it.
    this.#store.seen(tokenId, new Date(now).toISOString()).catch(() => this.#reported.delete(tokenId));
  }
}
