/**
 * Jobs in Redis, beside the store's keys and on its connection (so they share its deadlines and its
 * fail-closed behaviour). Layout under the store's prefix (`keyPrefix`: on a cluster the money slot, since
 * the ledger opens and closes a job in its reserve and settle scripts; store/redis.ts):
 *   j:<jobId>          hash   status, owner, doc (the job JSON as created), and p:<field> (a top-level field
 *                             changed since, as JSON); a read overlays the p: fields and status on the doc;
 *                             a job opened by the ledger's reserve also keeps `rsv`, what that script
 *                             decided (billing, micro-USD held, expiry, day), overlaid on the doc's reservation
 *   jlease             zset   non-terminal job ids scored by lease end on the Redis server's clock; the
 *                             sweeper's index
 *   ik:<principal>:<k> string idempotency binding JSON; expires with the retention
 * Each change is one script and one round trip: a live job is never replaced, a runner that lost its lease
 * cannot write, and a sweep fails an abandoned job exactly once. The writes are Lua functions in
 * lua/job.lib.lua, which the ledger's scripts (src/metering/redis-meter.ts) load too. Changed fields are written beside the doc
 * rather than merged into it, so no JSON passes through Lua (whose cjson cannot tell [] from {}).
 *
 * Leases are judged on one clock, the Redis server's (`TIME` in the scripts): a gateway sends how long a
 * lease runs from now, never an end read off its own clock, so an instance whose clock is ahead cannot fail
 * the jobs other instances are still running, nor one whose clock is behind keep a dead one's jobs alive.
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { isCluster } from '../store/connection.js';
import type { JobRecord } from './job.js';
import type { CreateOutcome, IdempotencyEntry, JobStore } from './store.js';

/** The job library (lua/job.lib.lua) the ledger's reserve and settle scripts load before their own. */
export const JOB_LIB = '../jobs/lua/job.lib.lua';

const LIB = 'lua/job.lib.lua';
const CREATE = loadLua(import.meta.url, LIB, 'lua/create.lua');
const UPDATE = loadLua(import.meta.url, LIB, 'lua/update.lua');
const RENEW = loadLua(import.meta.url, LIB, 'lua/renew.lua');
const SWEEP = loadLua(import.meta.url, LIB, 'lua/sweep.lua');
const MARK = loadLua(import.meta.url, 'lua/mark.lua');
const SWEEP_SETTLED = loadLua(import.meta.url, 'lua/sweep-settled.lua');

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

/** Overlays what the ledger's reserve decided (field `rsv`, written by `open_job`) on the job it opened. */
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

  /** A job's keys: its hash and the lease index (both in the money slot, where the ledger's scripts run). */
  keys(jobId: string): [string, string] {
    return [this.#job(jobId), this.#lease];
  }

  /** The arguments `open_job` (lua/job.lib.lua) takes after its keys: doc, status, owner, lease, retention, id. */
  openArgs(job: JobRecord, retentionMs: number): string[] {
    return [JSON.stringify(job), job.status, job.owner, this.#left(job.leaseUntil), String(retentionMs), job.jobId];
  }

  /** What `open_job` answered: created, or the live job with that id. */
  opened(reply: unknown): CreateOutcome {
    const [created, existing] = reply as [number, unknown];
    return created === 1 ? { created: true } : { created: false, job: decode(existing)! };
  }

  /** The arguments `update_job` takes after its keys: the change guarded by owner and status, then field pairs. */
  updateArgs(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number): string[] {
    const status = patch.status;
    const terminal = status === 'succeeded' || status === 'failed' || status === 'expired';
    const pairs = Object.entries(patch).flatMap(([k, v]) => (k === 'status' || v === undefined ? [] : [k, JSON.stringify(v)]));
    return [
      status ?? '',
      owner,
      String(retentionMs),
      jobId,
      terminal ? '1' : '0',
      patch.leaseUntil === undefined ? '' : this.#left(patch.leaseUntil),
      ...pairs,
    ];
  }

  async createOrAttach(job: JobRecord, retentionMs: number) {
    const outcome = this.opened(await this.#store.runScript('jobs.create', CREATE, this.keys(job.jobId), this.openArgs(job, retentionMs)));
    return outcome.created ? { created: true, job } : { created: false, job: outcome.job };
  }

  /**
   * Every chat call asks this once (the look-ahead's job lookup), and nearly always finds nothing. On one
   * primary HGETALL is sent as its words: its reply is the field and value list `decode` reads, where
   * node-redis' `hGetAll` builds a command parser and two async layers and makes an object of the list, which
   * was turned back into it here. A cluster's client routes the named command by its key.
   */
  get(jobId: string): Promise<JobRecord | null> {
    const key = this.#job(jobId);
    return this.#store
      .command<unknown>('jobs.get', (c) => (isCluster(c) ? c.hGetAll(key) : c.sendCommand(['HGETALL', key])))
      .then((fields) => decode(Array.isArray(fields) ? fields : Object.entries(fields ?? {}).flat()));
  }

  async update(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number) {
    const reply = await this.#store.runScript('jobs.update', UPDATE, this.keys(jobId), this.updateArgs(jobId, owner, patch, retentionMs));
    return reply === 0 ? null : decode(reply);
  }

  async markRunning(owner: string, jobIds: string[], updatedAt: string) {
    if (jobIds.length === 0) return;
    await this.#store.runScript('jobs.mark', MARK, [this.#prefix], [owner, JSON.stringify(updatedAt), ...jobIds]);
  }

  async renew(_owner: string, jobIds: string[], leaseUntil: number) {
    if (jobIds.length === 0) return;
    await this.#store.runScript('jobs.renew', RENEW, [this.#lease], [this.#left(leaseUntil), ...jobIds]);
  }

  /** `now` only dates the failure; whether a lease ended is judged on the Redis server's clock. */
  async sweep(now: number, limit: number, retentionMs: number, retryMs: number) {
    const reply = (await this.#store.runScript(
      'jobs.sweep',
      SWEEP,
      [this.#lease, this.#prefix],
      [String(limit), String(retentionMs), JSON.stringify(INTERRUPTED), JSON.stringify(new Date(now).toISOString()), String(retryMs)],
    )) as unknown[];
    return reply.map((r) => decode(r)!);
  }

  async sweepSettled(job: JobRecord) {
    await this.#store.runScript('jobs.sweep_settled', SWEEP_SETTLED, [this.#lease, this.#prefix], [job.jobId, JSON.stringify(job.updatedAt)]);
  }

  async idempotencyBinding(principalId: string, key: string) {
    const reply = await this.#store.command('jobs.binding', (c) => c.get(`${this.#prefix}ik:${principalId}:${key}`));
    return reply ? (JSON.parse(String(reply)) as IdempotencyEntry) : null;
  }

  async bindIdempotencyKey(principalId: string, key: string, entry: IdempotencyEntry, retentionMs: number) {
    // SET NX GET: binds unless bound, and answers the binding found (null: this one was bound).
    const reply = await this.#store.command('jobs.bind', (c) =>
      c.set(`${this.#prefix}ik:${principalId}:${key}`, JSON.stringify(entry), { condition: 'NX', expiration: { type: 'PX', value: retentionMs }, GET: true }),
    );
    return reply ? (JSON.parse(String(reply)) as IdempotencyEntry) : null;
  }

  async close() {}
}
