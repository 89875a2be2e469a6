/**
 * Jobs in Redis, beside the store's keys and on its connection (so they share its deadlines and its
 * fail-closed behaviour). Layout under the store's prefix (`keyPrefix`: on a cluster the money slot, since
 * a job's creation and end ride in the meter's scripts; store/redis.ts):
 *   j:<jobId>          hash   status, owner, doc (the job JSON as created), and p:<field> (a top-level field
 *                             changed since, as JSON); a read overlays the p: fields and status on the doc;
 *                             a job created in its reservation's script also keeps `rsv`, what that script
 *                             decided (billing, micro-USD held, expiry, day), overlaid on the doc's reservation
 *   jlease             zset   non-terminal job ids scored by lease end on the Redis server's clock; the
 *                             sweeper's index
 *   ik:<principal>:<k> string idempotency binding JSON; expires with the retention
 * Each change is one script and one round trip: a live job is never replaced, a runner that lost its lease
 * cannot write, and a sweep fails an abandoned job exactly once. Changed fields are written beside the doc
 * rather than merged into it, so no JSON passes through Lua (whose cjson cannot tell [] from {}).
 *
 * Leases are judged on one clock, the Redis server's (`TIME` in the scripts): a gateway sends how long a
 * lease runs from now, never an end read off its own clock, so an instance whose clock is ahead cannot fail
 * the jobs other instances are still running, nor one whose clock is behind keep a dead one's jobs alive.
 */
import type { RedisStore } from '../store/redis.js';
import { luaScript } from '../store/redis.js';
import type { JobRecord } from './job.js';
import type { CreateOutcome, IdempotencyEntry, JobStore } from './store.js';
import type { ReserveRider, SettleRider } from '../metering/meter.js';

/** The Redis server's clock in epoch ms: the one clock every lease is written and judged on. */
const REDIS_NOW_FN = `
local function redis_now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;

// KEYS job, lease  ARGV doc, status, owner, leaseMs (from now), retention, jobId
// FIRST: as a rider of a reservation (meter.reserve), the reserve script's reply {'ok', billing, micro,
// expiresAt, day}, kept as the field `rsv`: what only that script decides about the job's reservation.
const CREATE_BODY = `${REDIS_NOW_FN}
local st = redis.call('HGET', KEYS[1], 'status')
if st and st ~= 'failed' and st ~= 'expired' then return {0, redis.call('HGETALL', KEYS[1])} end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'owner', ARGV[3], 'doc', ARGV[1])
if FIRST then redis.call('HSET', KEYS[1], 'rsv', string.format('%s %d %d %s', FIRST[2], FIRST[3], FIRST[4], FIRST[5])) end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('ZADD', KEYS[2], redis_now_ms() + tonumber(ARGV[4]), ARGV[6])
return {1, false}`;
const CREATE = luaScript(`local FIRST = false\n${CREATE_BODY}`);
const CREATE_RIDER = luaScript(CREATE_BODY);

const GET = luaScript(`return redis.call('HGETALL', KEYS[1])`);

// KEYS job, lease  ARGV status|'', owner, retention, jobId, terminal(0/1), leaseMs|'', then field, json
// pairs. 0 when the caller no longer owns a live job; else UPDATE answers the job as it now is, and
// UPDATE_RIDER (the job's end in a settlement, whose caller knows the record) just 1.
const UPDATE_BODY = `${REDIS_NOW_FN}
local f = redis.call('HMGET', KEYS[1], 'status', 'owner')
if not f[1] or f[2] ~= ARGV[2] or f[1] == 'succeeded' or f[1] == 'failed' or f[1] == 'expired' then return 0 end
if ARGV[1] ~= '' then redis.call('HSET', KEYS[1], 'status', ARGV[1]) end
for i = 7, #ARGV, 2 do redis.call('HSET', KEYS[1], 'p:' .. ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[5] == '1' then redis.call('ZREM', KEYS[2], ARGV[4])
elseif ARGV[6] ~= '' then redis.call('ZADD', KEYS[2], 'XX', redis_now_ms() + tonumber(ARGV[6]), ARGV[4]) end`;
const UPDATE = luaScript(`${UPDATE_BODY}
return redis.call('HGETALL', KEYS[1])`);
const UPDATE_RIDER = luaScript(`${UPDATE_BODY}
return 1`);

// KEYS lease  ARGV leaseMs (from now), id...
const RENEW = luaScript(`${REDIS_NOW_FN}
local until_ms = redis_now_ms() + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', until_ms, ARGV[i]) end
return 0`);

// KEYS -  ARGV prefix, owner, updatedAtJson, id...  Only a queued job of this owner moves: never a finished one.
const MARK = luaScript(`
for i = 4, #ARGV do
  local k = ARGV[1] .. 'j:' .. ARGV[i]
  local f = redis.call('HMGET', k, 'status', 'owner')
  if f[1] == 'queued' and f[2] == ARGV[2] then redis.call('HSET', k, 'status', 'running', 'p:updatedAt', ARGV[3]) end
end
return 0`);

// KEYS lease  ARGV -, limit, prefix, retention, errorJson, updatedAtJson. "Now" is the Redis server's.
const SWEEP = luaScript(`${REDIS_NOW_FN}
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. redis_now_ms(), 'LIMIT', 0, tonumber(ARGV[2]))) do
  redis.call('ZREM', KEYS[1], id)
  local k = ARGV[3] .. 'j:' .. id
  local st = redis.call('HGET', k, 'status')
  if st and st ~= 'succeeded' and st ~= 'failed' and st ~= 'expired' then
    redis.call('HSET', k, 'status', 'failed', 'p:error', ARGV[5], 'p:updatedAt', ARGV[6])
    redis.call('PEXPIRE', k, ARGV[4])
    table.insert(out, redis.call('HGETALL', k))
  end
end
return out`);

/** A job as stored: the doc, overlaid with the fields changed since and the hash's status. */
function decode(reply: unknown): JobRecord | null {
  if (!Array.isArray(reply) || reply.length === 0) return null;
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), String(reply[i + 1]));
  const doc = fields.get('doc');
  if (doc === undefined) return null;
  const job = JSON.parse(doc) as JobRecord;
  const rsv = fields.get('rsv');
  if (rsv !== undefined) decided(job, rsv);
  for (const [k, v] of fields) if (k.startsWith('p:')) (job as unknown as Record<string, unknown>)[k.slice(2)] = JSON.parse(v);
  job.status = fields.get('status') as JobRecord['status'];
  return job;
}

/** Overlays what the reserve script decided (field `rsv`) on a job created as its rider. */
function decided(job: JobRecord, rsv: string): void {
  const [billing, micro, expiresAt, day] = rsv.split(' ');
  const paid = billing === 'paid';
  job.billing = paid ? 'paid' : 'free';
  job.reservation = {
    ...job.reservation,
    billing: job.billing,
    reservedMicroUSD: Number(micro),
    expiresAt: Number(expiresAt),
    day: day!,
    freeUnit: paid ? null : job.reservation.freeUnit,
  };
}

const BIND = luaScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return cur end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`);

const BINDING = luaScript(`return redis.call('GET', KEYS[1])`);

const INTERRUPTED = { code: 'job-interrupted', message: 'the gateway instance running this job stopped; resend the request to run it again' };

export class RedisJobStore implements JobStore {
  readonly #store: RedisStore;
  readonly #prefix: string;
  /** The clock the engine stamps lease ends with: only durations read off it reach Redis. */
  readonly #now: () => number;

  constructor(store: RedisStore, now: () => number = Date.now) {
    this.#store = store;
    this.#prefix = store.keyPrefix;
    this.#now = now;
  }

  /** A lease end on the engine's clock, as the time it has left (the scripts add Redis's own now). */
  #left(leaseUntil: number): string {
    return String(Math.round(leaseUntil - this.#now()));
  }

  #job(id: string) {
    return `${this.#prefix}j:${id}`;
  }

  get #lease() {
    return `${this.#prefix}jlease`;
  }

  #createCall(job: JobRecord, retentionMs: number) {
    return {
      keys: [this.#job(job.jobId), this.#lease],
      args: [JSON.stringify(job), job.status, job.owner, this.#left(job.leaseUntil), String(retentionMs), job.jobId],
    };
  }

  async createOrAttach(job: JobRecord, retentionMs: number) {
    const { keys, args } = this.#createCall(job, retentionMs);
    const reply = (await this.#store.runScript('jobs.create', CREATE, keys, args)) as [number, unknown];
    return reply[0] === 1 ? { created: true, job } : { created: false, job: decode(reply[1])! };
  }

  createRider(job: JobRecord, retentionMs: number, done: (outcome: CreateOutcome) => void): ReserveRider {
    return {
      redis: { script: CREATE_RIDER, ...this.#createCall(job, retentionMs) },
      done: (reply) => {
        const [created, existing] = reply as [number, unknown];
        done(created === 1 ? { created: true } : { created: false, job: decode(existing)! });
      },
    };
  }

  async get(jobId: string) {
    return decode(await this.#store.runScript('jobs.get', GET, [this.#job(jobId)], []));
  }

  /** The UPDATE script's keys and arguments: the changed fields go beside the doc, guarded by owner and status. */
  #updateCall(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number) {
    const status = patch.status;
    const terminal = status === 'succeeded' || status === 'failed' || status === 'expired';
    const pairs = Object.entries(patch).flatMap(([k, v]) => (k === 'status' || v === undefined ? [] : [k, JSON.stringify(v)]));
    return {
      keys: [this.#job(jobId), this.#lease],
      args: [status ?? '', owner, String(retentionMs), jobId, terminal ? '1' : '0', patch.leaseUntil === undefined ? '' : this.#left(patch.leaseUntil), ...pairs],
    };
  }

  async update(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number) {
    const { keys, args } = this.#updateCall(jobId, owner, patch, retentionMs);
    const reply = await this.#store.runScript('jobs.update', UPDATE, keys, args);
    return reply === 0 ? null : decode(reply);
  }

  updateRider(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number, done: (applied: boolean) => void): SettleRider {
    return {
      redis: { script: UPDATE_RIDER, ...this.#updateCall(jobId, owner, patch, retentionMs) },
      done: (reply) => done(reply === 1),
    };
  }

  async markRunning(owner: string, jobIds: string[], updatedAt: string) {
    if (jobIds.length === 0) return;
    await this.#store.runScript('jobs.mark', MARK, [], [this.#prefix, owner, JSON.stringify(updatedAt), ...jobIds]);
  }

  async renew(_owner: string, jobIds: string[], leaseUntil: number) {
    if (jobIds.length === 0) return;
    await this.#store.runScript('jobs.renew', RENEW, [this.#lease], [this.#left(leaseUntil), ...jobIds]);
  }

  /** `now` only dates the failure; whether a lease ended is judged on the Redis server's clock. */
  async sweep(now: number, limit: number, retentionMs: number) {
    const reply = (await this.#store.runScript('jobs.sweep', SWEEP, [this.#lease], [
      '-',
      String(limit),
      this.#prefix,
      String(retentionMs),
      JSON.stringify(INTERRUPTED),
      JSON.stringify(new Date(now).toISOString()),
    ])) as unknown[];
    return reply.map((r) => decode(r)!);
  }

  async idempotencyBinding(principalId: string, key: string) {
    const reply = (await this.#store.runScript('jobs.binding', BINDING, [`${this.#prefix}ik:${principalId}:${key}`], [])) as string | null;
    return reply ? (JSON.parse(reply) as IdempotencyEntry) : null;
  }

  async bindIdempotencyKey(principalId: string, key: string, entry: IdempotencyEntry, retentionMs: number) {
    const reply = (await this.#store.runScript('jobs.bind', BIND, [`${this.#prefix}ik:${principalId}:${key}`], [JSON.stringify(entry), String(retentionMs)])) as
      | string
      | null;
    return reply ? (JSON.parse(reply) as IdempotencyEntry) : null;
  }

  async close() {}
}
