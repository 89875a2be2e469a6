/**
 * Wallet accounts in Redis, beside the store's keys and on its connection.
 * Layout under the prefix (familyPrefix('wa') on a cluster, store/redis.ts):
 *   wa:<key>            string  the principal id the account signs in to (set once, never expires)
 *   wap:<principalId>   set     the keys of the principal's accounts (for the link hint)
 * Linking is one script: SET NX, and on success SADD, then GET; so racing first sign-ins agree on one
 * principal and the reverse set never names an account linked elsewhere.
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { WalletAccountStore } from './accounts.js';

const LINK = loadLua(import.meta.url, 'lua/link.lua');
const UNLINK = loadLua(import.meta.url, 'lua/unlink.lua');

export class RedisWalletAccounts implements WalletAccountStore {
  readonly #store: RedisStore;

  constructor(store: RedisStore) {
    this.#store = store;
  }

  async owner(key: string): Promise<string | null> {
    const v = await this.#store.command('wallet.owner', (c) => c.get(`${this.#store.familyPrefix('wa')}wa:${key}`));
    return typeof v === 'string' ? v : null;
  }

  async link(key: string, principalId: string): Promise<string> {
    const p = this.#store.familyPrefix('wa');
    return (await this.#store.runScript('wallet.link', LINK, [`${p}wa:${key}`, `${p}wap:${principalId}`], [principalId, key])) as string;
  }

  async unlink(key: string, principalId: string): Promise<boolean> {
    const p = this.#store.familyPrefix('wa');
    return (await this.#store.runScript('wallet.unlink', UNLINK, [`${p}wa:${key}`, `${p}wap:${principalId}`], [principalId, key])) === 1;
  }

  async accountsOf(principalId: string): Promise<string[]> {
    const keys = (await this.#store.command('wallet.accounts', (c) => c.sMembers(`${this.#store.familyPrefix('wa')}wap:${principalId}`))).map(String);
    return [...keys].sort();
  }
}
