/**
 * Recovery in Redis, on the store's connection.
 * Layout under the prefix (familyPrefix('rk') on a cluster, store/redis.ts):
 *   rk:<principalId>    string  the recovery key JSON (public key, secret hash or null, created)
 *   rkp:<publicKey>     string  the principal id of that public key
 *   rp:<principalId>    string  the pending recovery JSON
 *   rn:<principalId>    string  the last recovery the owner's sign-in cancelled (the owner's notice)
 * Setting up and starting are one script each.
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import type { CancelledRecovery, PendingRecovery, RecoveryKey, RecoveryStore, StartResult } from './store.js';

// KEYS key, index  ARGV json, prefix
const SET_UP = luaScript(`
local old = redis.call('GET', KEYS[1])
if old then redis.call('DEL', ARGV[2] .. 'rkp:' .. cjson.decode(old).publicKey) end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], cjson.decode(ARGV[1]).principalId)
return 1`);

// KEYS key, pending  ARGV secretHash, recovery json
const START = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 'secret-invalid' end
local k = cjson.decode(raw)
if type(k.secretHash) ~= 'string' or k.secretHash ~= ARGV[1] then return 'secret-invalid' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'pending' end
k.secretHash = cjson.null
redis.call('SET', KEYS[1], cjson.encode(k))
redis.call('SET', KEYS[2], ARGV[2])
return 'started'`);

// KEYS pending  ARGV id ('' = any)
const CLOSE = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if ARGV[1] ~= '' and cjson.decode(raw).id ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`);

// KEYS pending, notice  ARGV by, at — moves the pending recovery to the notice in one step.
const CANCEL = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
local p = cjson.decode(raw)
local notice = cjson.encode({ id = p.id, startedAt = p.startedAt, cancelledAt = tonumber(ARGV[2]), by = ARGV[1] })
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], notice)
return notice`);

const GET = luaScript(`return redis.call('GET', KEYS[1])`);

export class RedisRecoveryStore implements RecoveryStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('rk');
  }

  async #get<T>(key: string): Promise<T | null> {
    const raw = (await this.#store.runScript('recovery.get', GET, [`${this.#prefix}${key}`], [])) as string | null;
    return raw ? (JSON.parse(raw) as T) : null;
  }

  async setUp(key: RecoveryKey): Promise<void> {
    await this.#store.runScript('recovery.setUp', SET_UP, [`${this.#prefix}rk:${key.principalId}`, `${this.#prefix}rkp:${key.publicKey}`], [JSON.stringify(key), this.#prefix]);
  }

  keyOf(principalId: string): Promise<RecoveryKey | null> {
    return this.#get<RecoveryKey>(`rk:${principalId}`);
  }

  async byPublicKey(publicKey: string): Promise<RecoveryKey | null> {
    const pid = (await this.#store.runScript('recovery.byPublicKey', GET, [`${this.#prefix}rkp:${publicKey}`], [])) as string | null;
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
