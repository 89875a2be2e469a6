/** Wallet accounts in one process, beside the memory store (contract: test/wallet/accounts-contract.test.ts). */
import type { WalletAccountStore } from './accounts.js';

export class MemoryWalletAccounts implements WalletAccountStore {
  readonly #links = new Map<string, string>();
  readonly #byPrincipal = new Map<string, Set<string>>();

  async owner(key: string): Promise<string | null> {
    return this.#links.get(key) ?? null;
  }

  async link(key: string, principalId: string): Promise<string> {
    const existing = this.#links.get(key);
    if (existing !== undefined) return existing;
    this.#links.set(key, principalId);
    const keys = this.#byPrincipal.get(principalId) ?? new Set<string>();
    keys.add(key);
    this.#byPrincipal.set(principalId, keys);
    return principalId;
  }

  async unlink(key: string, principalId: string): Promise<boolean> {
    if (this.#links.get(key) !== principalId) return false;
    this.#links.delete(key);
    this.#byPrincipal.get(principalId)?.delete(key);
    return true;
  }

  async accountsOf(principalId: string): Promise<string[]> {
    return [...(this.#byPrincipal.get(principalId) ?? [])].sort();
  }
}
