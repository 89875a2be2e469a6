/**
 * Recovery in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('rk') on a cluster, store/redis.ts):
 *   rk:<principalId>    string  the recovery key JSON (public key, secret hash or null, created)
 *   rkp:<publicKey>     string  the principal id of that public key
 *   rp:<principalId>    string  the pending recovery JSON
 *   rn:<principalId>    string  the last recovery the owner's sign-in cancelled (the owner's notice)
 * Setting up and starting are one script each.
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { CancelledRecovery, PendingRecovery, RecoveryKey, RecoveryStore, StartResult } from './store.js';

const SET_UP = loadLua(import.meta.url, 'lua/set-up.lua');
const START = loadLua(import.meta.url, 'lua/start.lua');
const CLOSE = loadLua(import.meta.url, 'lua/close.lua');
const CANCEL = loadLua(import.meta.url, 'lua/cancel.lua');

export class RedisRecoveryStore implements RecoveryStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('rk');
  }

  async #get<T>(key: string): Promise<T | null> {
    const raw = await this.#store.command('recovery.get', (c) => c.get(`${this.#prefix}${key}`));
    return raw ? (JSON.parse(raw) as T) : null;
  }

  async setUp(key: RecoveryKey): Promise<void> {
    await this.#store.runScript(
      'recovery.setUp',
      SET_UP,
      [`${this.#prefix}rk:${key.principalId}`, `${this.#prefix}rkp:${key.publicKey}`, this.#prefix],
      [JSON.stringify(key)],
    );
  }

  keyOf(principalId: string): Promise<RecoveryKey | null> {
    return this.#get<RecoveryKey>(`rk:${principalId}`);
  }

  async byPublicKey(publicKey: string): Promise<RecoveryKey | null> {
    const pid = await this.#store.command('recovery.byPublicKey', (c) => c.get(`${this.#prefix}rkp:${publicKey}`));
    return pid ? this.keyOf(pid) : null;
  }

  async start(recovery: PendingRecovery, secretHash: string): Promise<StartResult> {
    const keys = [`${this.#prefix}rk:${recovery.principalId}`, `${this.#prefix}rp:${recovery.principalId}`];
    return (await this.#store.runScript('recovery.start', START, keys, [secretHash, JSON.stringify(recovery)])) as StartResult;
  }

  pending(principalId: string): Promise<PendingRecovery | null> {
    return this.#get<PendingRecovery>(`rp:${principalId}`);
  }

  async end(principalId: string, id?: string): Promise<boolean> {
    return (await this.#store.runScript('recovery.end', CLOSE, [`${this.#prefix}rp:${principalId}`], [id ?? ''])) === 1;
  }

  async cancel(principalId: string, by: string, at: number): Promise<CancelledRecovery | null> {
    const keys = [`${this.#prefix}rp:${principalId}`, `${this.#prefix}rn:${principalId}`];
    const raw = (await this.#store.runScript('recovery.cancel', CANCEL, keys, [by, String(at)])) as string | null;
    return raw ? (JSON.parse(raw) as CancelledRecovery) : null;
  }

  lastCancelled(principalId: string): Promise<CancelledRecovery | null> {
    return this.#get<CancelledRecovery>(`rn:${principalId}`);
  }
}
