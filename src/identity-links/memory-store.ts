/** Identity-provider links in one process (contract suite in test/identity-links/contract.test.ts). */
import { identityKey, type IdentityLink, type IdentityLinkStore } from './store.js';

export class MemoryIdentityLinks implements IdentityLinkStore {
  readonly #owner = new Map<string, string>();
  readonly #byPrincipal = new Map<string, IdentityLink>();

  async link(principalId: string, link: IdentityLink): Promise<string> {
    const key = identityKey(link.issuer, link.subject);
    const owner = this.#owner.get(key);
    if (owner !== undefined && owner !== principalId) return owner;
    const previous = this.#byPrincipal.get(principalId);
    if (previous) this.#owner.delete(identityKey(previous.issuer, previous.subject));
    this.#owner.set(key, principalId);
    this.#byPrincipal.set(principalId, { ...link });
    return principalId;
  }

  async linkOf(principalId: string): Promise<IdentityLink | null> {
    const l = this.#byPrincipal.get(principalId);
    return l ? { ...l } : null;
  }
}
