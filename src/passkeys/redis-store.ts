/**
 * Passkeys in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('pk') on a cluster, store/redis.ts):
 *   pk:<credentialId>    string  the record JSON
 *   pkp:<principalId>    list    credential ids in registration order
 *   pkl:<principalId>    string  the lock on the principal's sign-in methods (a token, with a short expiry)
 * `add` is one script (SET NX and the index together); `advance` is one compare-and-set script; `remove`
 * deletes the record and its index entry together, only when the record is the principal's.
 */
import { randomUUID } from 'node:crypto';
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { PasskeyRecord, PasskeyStore } from './store.js';

const ADD = loadLua(import.meta.url, 'lua/add.lua');

const LIST = loadLua(import.meta.url, 'lua/list.lua');
const ADVANCE = loadLua(import.meta.url, 'lua/advance.lua');
const REMOVE = loadLua(import.meta.url, 'lua/remove.lua');
const UNLOCK = loadLua(import.meta.url, 'lua/unlock.lua');

/** cjson turns an empty array into `{}`; read transports back as a list whatever it wrote. */
function decode(raw: string): PasskeyRecord {
  const p = JSON.parse(raw) as PasskeyRecord;
  return { ...p, transports: Array.isArray(p.transports) ? p.transports : [] };
}

export class RedisPasskeyStore implements PasskeyStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('pk');
  }

  async add(passkey: PasskeyRecord): Promise<boolean> {
    const keys = [`${this.#prefix}pk:${passkey.id}`, `${this.#prefix}pkp:${passkey.principalId}`];
    return (await this.#store.runScript('passkeys.add', ADD, keys, [JSON.stringify(passkey), passkey.id])) === 1;
  }

  async get(id: string): Promise<PasskeyRecord | null> {
    const raw = await this.#store.command('passkeys.get', (c) => c.get(`${this.#prefix}pk:${id}`));
    return raw ? decode(raw) : null;
  }

  async list(principalId: string): Promise<PasskeyRecord[]> {
    const raws = (await this.#store.runScript('passkeys.list', LIST, [`${this.#prefix}pkp:${principalId}`, this.#prefix], [])) as string[];
    return raws.map(decode);
  }

  async remove(id: string, principalId: string): Promise<boolean> {
    const keys = [`${this.#prefix}pk:${id}`, `${this.#prefix}pkp:${principalId}`];
    return (await this.#store.runScript('passkeys.remove', REMOVE, keys, [principalId, id])) === 1;
  }

  async lockMethods(principalId: string, ttlMs: number): Promise<string | null> {
    const token = randomUUID();
    const taken = await this.#store.command('passkeys.lock', (c) =>
      c.set(`${this.#prefix}pkl:${principalId}`, token, { condition: 'NX', expiration: { type: 'PX', value: ttlMs } }),
    );
    return taken !== null ? token : null;
  }

  async unlockMethods(principalId: string, token: string): Promise<void> {
    await this.#store.runScript('passkeys.unlock', UNLOCK, [`${this.#prefix}pkl:${principalId}`], [token]);
  }

  async advance(id: string, counter: number, at: string): Promise<boolean> {
    return (await this.#store.runScript('passkeys.advance', ADVANCE, [`${this.#prefix}pk:${id}`], [String(counter), at])) === 1;
  }
}
