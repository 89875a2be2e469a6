/**
 * TOTP enrolments in Redis, on the store's connection.
 * Layout under the prefix (on a cluster principalPrefix('totp', id), that principal's own tag):
 *   totp:<principalId>    hash    secret, state, lastStep, createdAt
 *   totpr:<principalId>   set     SHA-256 hashes of unused recovery codes
 *   totpf:<principalId>   hash    n (wrong codes), until (ms); expires with its window
 * Each check-and-use is one script.
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import type { TotpRecord } from './store.js';
import type { SealableTotpStore } from './sealed-store.js';

// KEYS record  ARGV secret, createdAt
const BEGIN = luaScript(`
if redis.call('HGET', KEYS[1], 'state') == 'active' then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'secret', ARGV[1], 'state', 'pending', 'lastStep', '-1', 'createdAt', ARGV[2])
return 1`);

// KEYS record, codes  ARGV step, hashes...
const ACTIVATE = luaScript(`
if redis.call('HGET', KEYS[1], 'state') ~= 'pending' then return 0 end
redis.call('HSET', KEYS[1], 'state', 'active', 'lastStep', ARGV[1])
redis.call('DEL', KEYS[2])
for i = 2, #ARGV do redis.call('SADD', KEYS[2], ARGV[i]) end
return 1`);

// KEYS record  ARGV step
const USE_STEP = luaScript(`
local f = redis.call('HMGET', KEYS[1], 'state', 'lastStep')
if f[1] ~= 'active' or tonumber(ARGV[1]) <= tonumber(f[2]) then return 0 end
redis.call('HSET', KEYS[1], 'lastStep', ARGV[1])
return 1`);

// KEYS failures  ARGV now, windowMs
const FAILURE = luaScript(`
local f = redis.call('HMGET', KEYS[1], 'n', 'until')
local now = tonumber(ARGV[1])
local n, untilMs = tonumber(f[1]) or 0, tonumber(f[2]) or 0
if untilMs <= now then n = 0; untilMs = now + tonumber(ARGV[2]) end
n = n + 1
redis.call('HSET', KEYS[1], 'n', tostring(n), 'until', tostring(untilMs))
redis.call('PEXPIRE', KEYS[1], math.max(1, untilMs - now))
return n`);

// KEYS record  ARGV expected secret, new secret
const REPLACE_SECRET = luaScript(`
if redis.call('HGET', KEYS[1], 'secret') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'secret', ARGV[2])
return 1`);

const GET = luaScript(`return redis.call('HGETALL', KEYS[1])`);
const SREM = luaScript(`return redis.call('SREM', KEYS[1], ARGV[1])`);
const SCARD = luaScript(`return redis.call('SCARD', KEYS[1])`);
const DEL = luaScript(`return redis.call('DEL', KEYS[1])`);

export class RedisTotpStore implements SealableTotpStore {
  readonly #store: RedisStore;

  constructor(store: RedisStore) {
    this.#store = store;
  }

  // Every script here touches one principal's keys only, so on a cluster they carry that principal's tag.
  #k(space: 'totp' | 'totpr' | 'totpf', principalId: string): string {
    return `${this.#store.principalPrefix('totp', principalId)}${space}:${principalId}`;
  }

  async get(principalId: string): Promise<TotpRecord | null> {
    const flat = (await this.#store.runScript('totp.get', GET, [this.#k('totp', principalId)], [])) as string[];
    if (flat.length === 0) return null;
    const h: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    return { principalId, secret: h['secret']!, state: h['state'] as TotpRecord['state'], lastStep: Number(h['lastStep']), createdAt: h['createdAt']! };
  }

  async begin(record: TotpRecord): Promise<boolean> {
    return (await this.#store.runScript('totp.begin', BEGIN, [this.#k('totp', record.principalId)], [record.secret, record.createdAt])) === 1;
  }

  async activate(principalId: string, step: number, recoveryHashes: string[]): Promise<boolean> {
    const keys = [this.#k('totp', principalId), this.#k('totpr', principalId)];
    return (await this.#store.runScript('totp.activate', ACTIVATE, keys, [String(step), ...recoveryHashes])) === 1;
  }

  async useStep(principalId: string, step: number): Promise<boolean> {
    return (await this.#store.runScript('totp.useStep', USE_STEP, [this.#k('totp', principalId)], [String(step)])) === 1;
  }

  async useRecoveryCode(principalId: string, hash: string): Promise<boolean> {
    return (await this.#store.runScript('totp.useRecoveryCode', SREM, [this.#k('totpr', principalId)], [hash])) === 1;
  }

  async recoveryCodesLeft(principalId: string): Promise<number> {
    return Number(await this.#store.runScript('totp.recoveryCodesLeft', SCARD, [this.#k('totpr', principalId)], []));
  }

  async failure(principalId: string, now: number, windowMs: number): Promise<number> {
    return Number(await this.#store.runScript('totp.failure', FAILURE, [this.#k('totpf', principalId)], [String(now), String(windowMs)]));
  }

  async failures(principalId: string, now: number): Promise<number> {
    const flat = (await this.#store.runScript('totp.failures', GET, [this.#k('totpf', principalId)], [])) as string[];
    const h: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    return Number(h['until'] ?? 0) > now ? Number(h['n'] ?? 0) : 0;
  }

  async clearFailures(principalId: string): Promise<void> {
    await this.#store.runScript('totp.clearFailures', DEL, [this.#k('totpf', principalId)], []);
  }

  async replaceSecret(principalId: string, expected: string, next: string): Promise<boolean> {
    return (await this.#store.runScript('totp.replaceSecret', REPLACE_SECRET, [this.#k('totp', principalId)], [expected, next])) === 1;
  }

  async *principals(): AsyncIterable<string> {
    // A record's key holds the id once on one primary and twice on a cluster (in its hash tag too), so the
    // id's length follows from the key's; each candidate is confirmed by building its key again.
    const empty = this.#k('totp', '').length;
    const perChar = this.#k('totp', 'x').length - empty;
    for await (const key of this.#store.scanKeys('*totp:*')) {
      const n = (key.length - empty) / perChar;
      if (!Number.isInteger(n) || n <= 0) continue;
      const id = key.slice(key.length - n);
      if (key === this.#k('totp', id)) yield id;
    }
  }
}
