/**
 * Decision records and version contents in Redis, beside the store's keys and on its connection.
 * Layout under familyPrefix('dec') (one slot on a cluster):
 *   dec:r:<decision id>  string  the record's JSON, expiring after the retention (PX)
 *   dec:t                zset    decision id -> timestamp (epoch ms); entries past the retention are trimmed
 *                                on each write, and one whose record expired is skipped when listing
 *   dec:v                hash    "<document> <sha256>" -> the version's JSON, written once (HSETNX)
 *   dec:rep              hash    candidate fingerprint -> ISO time an impact report was produced for it
 */
import { luaScript, type RedisStore } from '../store/redis.js';
import type { DecisionRecord } from './record.js';
import type { DecisionStore, StoredVersion } from './store.js';

// KEYS zset  ARGV recordKeyPrefix, id, json, atMs, retentionMs, nowMs
const PUT = luaScript(`
local key = ARGV[1] .. ARGV[2]
if redis.call('SET', key, ARGV[3], 'NX', 'PX', ARGV[5]) then
  redis.call('ZADD', KEYS[1], ARGV[4], ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[6]) - tonumber(ARGV[5])))
return 1`);

// KEYS zset  ARGV recordKeyPrefix, fromMs, toMs(exclusive), limit
const LIST = luaScript(`
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[2], '(' .. ARGV[3], 'LIMIT', 0, ARGV[4])
local out = {}
for i = 1, #ids do
  local v = redis.call('GET', ARGV[1] .. ids[i])
  if v then out[#out + 1] = v end
end
return out`);

export class RedisDecisionStore implements DecisionStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = `${store.familyPrefix('dec')}dec:`;
  }

  async put(record: DecisionRecord, retentionMs: number, now: number): Promise<void> {
    const args = [`${this.#prefix}r:`, record.decision_id, JSON.stringify(record), String(Date.parse(record.timestamp)), String(Math.max(1, Math.floor(retentionMs))), String(now)];
    await this.#store.runScript('decisions.put', PUT, [`${this.#prefix}t`], args);
  }

  async get(id: string): Promise<DecisionRecord | null> {
    const reply = await this.#store.runScript('decisions.get', GET, [`${this.#prefix}r:${id}`], []);
    return typeof reply === 'string' ? (JSON.parse(reply) as DecisionRecord) : null;
  }

  async list(fromMs: number, toMs: number, limit: number): Promise<DecisionRecord[]> {
    const reply = (await this.#store.runScript('decisions.list', LIST, [`${this.#prefix}t`], [`${this.#prefix}r:`, String(fromMs), String(toMs), String(limit)])) as string[];
    return reply.map((j) => JSON.parse(j) as DecisionRecord);
  }

  async putVersion(v: StoredVersion): Promise<void> {
    await this.#store.runScript('decisions.putVersion', HSETNX, [`${this.#prefix}v`], [`${v.document} ${v.sha256}`, JSON.stringify(v)]);
  }

  async getVersion(document: string, sha256: string): Promise<StoredVersion | null> {
    const reply = await this.#store.runScript('decisions.getVersion', HGET, [`${this.#prefix}v`], [`${document} ${sha256}`]);
    return typeof reply === 'string' ? (JSON.parse(reply) as StoredVersion) : null;
  }

  async noteReport(fingerprint: string, at: string): Promise<void> {
    await this.#store.runScript('decisions.noteReport', HSET, [`${this.#prefix}rep`], [fingerprint, at]);
  }

  async reported(fingerprint: string): Promise<string | null> {
    const reply = await this.#store.runScript('decisions.reported', HGET, [`${this.#prefix}rep`], [fingerprint]);
    return typeof reply === 'string' ? reply : null;
  }
}

const GET = luaScript(`return redis.call('GET', KEYS[1])`);
const HGET = luaScript(`return redis.call('HGET', KEYS[1], ARGV[1])`);
const HSET = luaScript(`return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])`);
const HSETNX = luaScript(`return redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])`);
