/**
 * Wallet accounts in Redis, beside the store's keys and on its connection. Layout under the store's prefix:
 *   wa:<key>   string  the principal id the account signs in to (set once, never expires)
 * Linking is SET NX then GET in one script, so racing first sign-ins agree on one principal.
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import type { WalletAccountStore } from './accounts.js';

// KEYS link  ARGV principalId
const LINK = luaScript(`
redis.call('SET', KEYS[1], ARGV[1], 'NX')
return redis.call('GET', KEYS[1])`);

const OWNER = luaScript(`return redis.call('GET', KEYS[1])`);

export class RedisWalletAccounts implements WalletAccountStore {
  readonly #store: RedisStore;

  constructor(store: RedisStore) {
    this.#store = store;
  }

  async owner(key: string): Promise<string | null> {
    const v = await this.#store.runScript('wallet.owner', OWNER, [`${this.#store.keyPrefix}wa:${key}`], []);
    return typeof v === 'string' ? v : null;
  }

  async link(key: string, principalId: string): Promise<string> {
    return (await this.#store.runScript('wallet.link', LINK, [`${this.#store.keyPrefix}wa:${key}`], [principalId])) as string;
  }
}
