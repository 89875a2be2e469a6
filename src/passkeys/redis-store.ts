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
import { luaScript, type RedisStore } from '../store/redis.js';
import type { PasskeyRecord, PasskeyStore } from './store.js';

// KEYS passkey, index  ARGV json, id
const ADD = luaScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX') then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1`);

// KEYS passkey
const GET = luaScript(`return redis.call('GET', KEYS[1])`);

// KEYS index  ARGV prefix
const LIST = luaScript(`
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local p = redis.call('GET', ARGV[1] .. 'pk:' .. id)
  if p then out[#out + 1] = p end
end
return out`);

// KEYS passkey  ARGV counter, at
const ADVANCE = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local p = cjson.decode(raw)
local c = tonumber(ARGV[1])
if not (c > p.counter or (c == 0 and p.counter == 0)) then return 0 end
p.counter = c
p.lastUsedAt = ARGV[2]
redis.call('SET', KEYS[1], cjson.encode(p))
return 1`);

// KEYS passkey, index  ARGV principalId, id
const REMOVE = luaScript(`
local raw = redis.call('GET', KEYS[1])
if not raw or cjson.decode(raw).principalId ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('LREM', KEYS[2], 0, ARGV[2])
return 1`);

// KEYS lock  ARGV token, ttlMs
const LOCK = luaScript(`return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0`);
// KEYS lock  ARGV token: deletes only the holder's own lock (one that lapsed and was retaken is not its).
const UNLOCK = luaScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0`);

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
    const raw = (await this.#store.runScript('passkeys.get', GET, [`${this.#prefix}pk:${id}`], [])) as string | null;
    return raw ? decode(raw) : null;
  }

  async list(principalId: string): Promise<PasskeyRecord[]> {
    const raws = (await this.#store.runScript('passkeys.list', LIST, [`${this.#prefix}pkp:${principalId}`], [this.#prefix])) as string[];
    return raws.map(decode);
  }

  async remove(id: string, principalId: string): Promise<boolean> {
    const keys = [`${this.#prefix}pk:${id}`, `${this.#prefix}pkp:${principalId}`];
    return (await this.#store.runScript('passkeys.remove', REMOVE, keys, [principalId, id])) === 1;
  }

  async lockMethods(principalId: string, ttlMs: number): Promise<string | null> {
    const token = randomUUID();
    const taken = await this.#store.runScript('passkeys.lock', LOCK, [`${this.#prefix}pkl:${principalId}`], [token, String(ttlMs)]);
    return taken === 1 ? token : null;
  }

  async unlockMethods(principalId: string, token: string): Promise<void> {
    await this.#store.runScript('passkeys.unlock', UNLOCK, [`${this.#prefix}pkl:${principalId}`], [token]);
  }

  async advance(id: string, counter: number, at: string): Promise<boolean> {
    return (await this.#store.runScript('passkeys.advance', ADVANCE, [`${this.#prefix}pk:${id}`], [String(counter), at])) === 1;
  }
}
