/**
 * Identity-provider links in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('idp') on a cluster, store/redis.ts):
 *   idp:<issuer>#<subject>   string  the principal the identity names (first link stands)
 *   idpp:<principalId>       string  the principal's link (JSON)
 * `link` is one script: it claims the identity, releases the principal's previous one, stores the record.
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { identityKey, type IdentityLink, type IdentityLinkStore } from './store.js';

const LINK = loadLua(import.meta.url, 'lua/link.lua');

export class RedisIdentityLinks implements IdentityLinkStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('idp');
  }

  async link(principalId: string, link: IdentityLink): Promise<string> {
    const keys = [`${this.#prefix}idp:${identityKey(link.issuer, link.subject)}`, `${this.#prefix}idpp:${principalId}`, this.#prefix];
    return (await this.#store.runScript('identity-links.link', LINK, keys, [principalId, JSON.stringify(link)])) as string;
  }

  async linkOf(principalId: string): Promise<IdentityLink | null> {
    const raw = await this.#store.command('identity-links.get', (c) => c.get(`${this.#prefix}idpp:${principalId}`));
    return typeof raw === 'string' ? (JSON.parse(raw) as IdentityLink) : null;
  }
}
