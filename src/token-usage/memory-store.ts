/** Token last-use times in one process (contract suite in test/token-usage/contract.test.ts). */
import type { TokenUsageStore } from './store.js';

export class MemoryTokenUsageStore implements TokenUsageStore {
  readonly #at = new Map<string, string>();

  async seen(tokenId: string, at: string): Promise<void> {
    const held = this.#at.get(tokenId);
    if (held === undefined || held < at) this.#at.set(tokenId, at);
  }

  async lastUsed(tokenIds: string[]): Promise<Array<string | null>> {
    return tokenIds.map((id) => this.#at.get(id) ?? null);
  }
}
