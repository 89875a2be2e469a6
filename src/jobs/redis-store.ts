/**
 * Jobs in Redis, beside the store's keys and on its connection (so they share its deadlines and its
 * fail-closed behaviour). Layout under the store's prefix:
 *   j:<jobId>          hash   status, owner, doc (the job JSON as its runner last wrote it), and `error` when a
 *                             sweeper failed it; `status` and `error` win over the doc's (see decode)
 *   jlease             zset   non-terminal job ids scored by lease end; the sweeper's index
 *   ik:<principal>:<k> string idempotency binding JSON; expires with the retention
 * Each change is one script: a live job is never replaced, a runner that lost its lease cannot write, and
 * a sweep fails an abandoned job exactly once.
 */
import type { RedisStore } from '../store/redis.js';
import { luaScript } from '../store/redis.js';
import type { JobRecord } from './job.js';
import type { IdempotencyEntry, JobStore } from './store.js';

const CREATE = luaScript(`
local st = redis.call('HGET', KEYS[1], 'status')
if st and st ~= 'failed' and st ~= 'expired' then return {0, redis.call('HMGET', KEYS[1], 'status', 'error', 'doc')} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'owner', ARGV[3], 'doc', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[6])
return {1, {ARGV[2], false, ARGV[1]}}`);

const GET = luaScript(`return redis.call('HMGET', KEYS[1], 'status', 'error', 'doc')`);

// KEYS job, lease  ARGV doc, status, owner, retention, jobId, terminal(0/1), leaseUntil
const UPDATE = luaScript(`
local f = redis.call('HMGET', KEYS[1], 'status', 'owner')
if not f[1] or f[2] ~= ARGV[3] or f[1] == 'succeeded' or f[1] == 'failed' or f[1] == 'expired' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'doc', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if ARGV[6] == '1' then redis.call('ZREM', KEYS[2], ARGV[5]) else redis.call('ZADD', KEYS[2], 'XX', ARGV[7], ARGV[5]) end
return 1`);

// KEYS lease  ARGV leaseUntil, id...
const RENEW = luaScript(`
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', ARGV[1], ARGV[i]) end
return 0`);

// KEYS lease  ARGV now, limit, prefix, retention, errorJson. The doc is left as its runner wrote it (no JSON
// round trip through Lua, whose cjson cannot tell an empty array from an empty object).
const SWEEP = luaScript(`
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))) do
  redis.call('ZREM', KEYS[1], id)
  local k = ARGV[3] .. 'j:' .. id
  local f = redis.call('HMGET', k, 'status', 'doc')
  if f[1] and f[1] ~= 'succeeded' and f[1] ~= 'failed' and f[1] ~= 'expired' then
    redis.call('HSET', k, 'status', 'failed', 'error', ARGV[5])
    redis.call('PEXPIRE', k, ARGV[4])
    table.insert(out, {'failed', ARGV[5], f[2]})
  end
end
return out`);

const BIND = luaScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`);

/** A job as stored: the doc, with the hash's status and error (a sweeper's verdict) taking precedence. */
function decode(reply: unknown): JobRecord | null {
  if (!Array.isArray(reply) || typeof reply[2] !== 'string') return null;
  const [status, error, doc] = reply as [JobRecord['status'], string | null, string];
  const job = JSON.parse(doc) as JobRecord;
  job.status = status;
  if (error) job.error = JSON.parse(error) as JobRecord['error'] & object;
  return job;
}

const INTERRUPTED = { code: 'job-interrupted', message: 'the gateway instance running this job stopped; resend the request to run it again' };

export class RedisJobStore implements JobStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.keyPrefix;
  }

  #job(id: string) {
    return `${this.#prefix}j:${id}`;
  }

  get #lease() {
    return `${this.#prefix}jlease`;
  }

  async createOrAttach(job: JobRecord, retentionMs: number) {
    const reply = (await this.#store.runScript('jobs.create', CREATE, [this.#job(job.jobId), this.#lease], [
      JSON.stringify(job),
      job.status,
      job.owner,
      String(job.leaseUntil),
      String(retentionMs),
      job.jobId,
    ])) as [number, unknown];
    return { created: reply[0] === 1, job: decode(reply[1])! };
  }

  async get(jobId: string) {
    return decode(await this.#store.runScript('jobs.get', GET, [this.#job(jobId)], []));
  }

  async update(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number) {
    const current = await this.get(jobId);
    if (!current || current.owner !== owner) return null;
    const next = { ...current, ...patch };
    const terminal = next.status === 'succeeded' || next.status === 'failed' || next.status === 'expired';
    const ok = await this.#store.runScript('jobs.update', UPDATE, [this.#job(jobId), this.#lease], [
      JSON.stringify(next),
      next.status,
      owner,
      String(retentionMs),
      jobId,
      terminal ? '1' : '0',
      String(next.leaseUntil),
    ]);
    return ok === 1 ? next : null;
  }

  async renew(_owner: string, jobIds: string[], leaseUntil: number) {
    if (jobIds.length === 0) return;
    await this.#store.runScript('jobs.renew', RENEW, [this.#lease], [String(leaseUntil), ...jobIds]);
  }

  async sweep(now: number, limit: number, retentionMs: number) {
    const reply = (await this.#store.runScript('jobs.sweep', SWEEP, [this.#lease], [
      String(now),
      String(limit),
      this.#prefix,
      String(retentionMs),
      JSON.stringify(INTERRUPTED),
    ])) as unknown[];
    return reply.map((r) => ({ ...decode(r)!, updatedAt: new Date(now).toISOString() }));
  }

  async bindIdempotencyKey(principalId: string, key: string, entry: IdempotencyEntry, retentionMs: number) {
    const reply = (await this.#store.runScript('jobs.bind', BIND, [`${this.#prefix}ik:${principalId}:${key}`], [JSON.stringify(entry), String(retentionMs)])) as
      | string
      | null;
    return reply ? (JSON.parse(reply) as IdempotencyEntry) : null;
  }

  async close() {}
}
