/**
 * Sessions in Redis, beside the store's keys and on its connection (its deadlines, its fail-closed
 * behaviour: Redis down means no session resolves, 503 `store-unavailable`).
 * Layout under the prefix (familyPrefix('ses') on a cluster, store/redis.ts):
 *   ses:<hash>           hash  p (principal), m (method), s (state), c, l, e (created, last seen, expires; ms)
 *                              — expires by itself at the earlier of its idle and absolute ends
 *   sesp:<principalId>   set   hashes of the principal's sessions, for "sign out everywhere"
 * Each operation is one script, so a touch never revives a session another instance just ended.
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import { keepMs, type SessionRecord, type SessionState, type SessionStore } from './store.js';

// KEYS session, index  ARGV prefix, hash, p, m, s, c, l, e, keepMs, indexKeepMs
const CREATE = luaScript(`
for _, h in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('EXISTS', ARGV[1] .. 'ses:' .. h) == 0 then redis.call('SREM', KEYS[2], h) end
end
redis.call('HSET', KEYS[1], 'p', ARGV[3], 'm', ARGV[4], 's', ARGV[5], 'c', ARGV[6], 'l', ARGV[7], 'e', ARGV[8])
redis.call('PEXPIRE', KEYS[1], ARGV[9])
redis.call('SADD', KEYS[2], ARGV[2])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[10]) then redis.call('PEXPIRE', KEYS[2], ARGV[10]) end
return 1`);

// KEYS session  ARGV prefix, hash, now, idleMs
const TOUCH = luaScript(`
local f = redis.call('HMGET', KEYS[1], 'p', 'm', 's', 'c', 'l', 'e')
if not f[1] then return false end
local now, idle, l, e = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(f[5]), tonumber(f[6])
if now >= e or now - l >= idle then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', ARGV[1] .. 'sesp:' .. f[1], ARGV[2])
  return false
end
if now > l then
  l = now
  redis.call('HSET', KEYS[1], 'l', tostring(l))
end
redis.call('PEXPIRE', KEYS[1], math.max(1, math.min(e - now, l + idle - now)))
return {f[1], f[2], f[3], f[4], tostring(l), f[6]}`);

// KEYS session  ARGV expiresAt, now, idleMs
const ACTIVATE = luaScript(`
local f = redis.call('HMGET', KEYS[1], 's', 'l', 'e')
if f[1] ~= 'pending-2fa' then return 0 end
local e, now, idle, l = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(f[2])
if now >= tonumber(f[3]) or now - l >= idle then return 0 end
if now > l then l = now end
redis.call('HSET', KEYS[1], 's', 'active', 'e', ARGV[1], 'l', tostring(l))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.min(e - now, l + idle - now)))
return 1`);

// KEYS session  ARGV prefix, hash
const END = luaScript(`
local p = redis.call('HGET', KEYS[1], 'p')
if not p then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', ARGV[1] .. 'sesp:' .. p, ARGV[2])
return 1`);

// KEYS index  ARGV prefix
const END_ALL = luaScript(`
local n = 0
for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do n = n + redis.call('DEL', ARGV[1] .. 'ses:' .. h) end
redis.call('DEL', KEYS[1])
return n`);

export class RedisSessionStore implements SessionStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('ses');
  }

  #session(hash: string): string {
    return `${this.#prefix}ses:${hash}`;
  }

  #index(principalId: string): string {
    return `${this.#prefix}sesp:${principalId}`;
  }

  async create(s: SessionRecord, idleMs: number): Promise<void> {
    await this.#store.runScript('sessions.create', CREATE, [this.#session(s.hash), this.#index(s.principalId)], [
      this.#prefix,
      s.hash,
      s.principalId,
      s.method,
      s.state,
      String(s.createdAt),
      String(s.lastSeenAt),
      String(s.expiresAt),
      String(keepMs(s, s.lastSeenAt, idleMs)),
      String(Math.max(1, s.expiresAt - s.lastSeenAt)),
    ]);
  }

  async touch(hash: string, now: number, idleMs: number): Promise<SessionRecord | null> {
    const reply = (await this.#store.runScript('sessions.touch', TOUCH, [this.#session(hash)], [this.#prefix, hash, String(now), String(idleMs)])) as
      | [string, string, string, string, string, string]
      | null;
    if (!reply) return null;
    const [principalId, method, state, c, l, e] = reply;
    return { hash, principalId, method, state: state as SessionState, createdAt: Number(c), lastSeenAt: Number(l), expiresAt: Number(e) };
  }

  async activate(hash: string, expiresAt: number, now: number, idleMs: number): Promise<boolean> {
    return (await this.#store.runScript('sessions.activate', ACTIVATE, [this.#session(hash)], [String(expiresAt), String(now), String(idleMs)])) === 1;
  }

  async end(hash: string): Promise<boolean> {
    return (await this.#store.runScript('sessions.end', END, [this.#session(hash)], [this.#prefix, hash])) === 1;
  }

  async endAll(principalId: string): Promise<number> {
    return Number(await this.#store.runScript('sessions.endAll', END_ALL, [this.#index(principalId)], [this.#prefix]));
  }
}
