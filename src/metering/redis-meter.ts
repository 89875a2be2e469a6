/**
 * The ledger and meter in Redis, on the store's connection and under its key prefix (so it shares the
 * store's deadlines and fail-closed behaviour: Redis down means 503 `store-unavailable`, nothing admitted).
 * Each operation is one Lua script (lua/, composed at load with the libraries it calls), so it is atomic
 * and costs one round trip:
 *
 *   reserve  (lua/reserve.lua) sweep a few expired reservations, judge the call by the admission rule
 *            (lua/admission.lib.lua, on limits.ts `Admission` sent as plain arguments), hold it; a job given to the
 *            reservation is opened in the same script (src/jobs/lua/job.lib.lua `open_job`)
 *   settle   (lua/settle.lua) charge the reported usage (all of it, even above the hold), release the
 *            hold, store the receipt and sequence its leaf in the receipt log (src/receipts/lua) — one
 *            script, hence one AOF entry: with `appendfsync always` it is on disk before the reply. It
 *            first looks for the receipt: a retry (also of a script whose reply was lost) finds it and
 *            changes nothing. A job's closing is written in the same script (`update_job`) when the
 *            settlement applies.
 * Both answer named fields ({name, value, ...}), so no caller reads a reply by position.
 *
 * Layout (under the store's prefix, beside its keys):
 *   bill:<principal>        hash   aiGranted, aiSpent, aiReserved (integer micro-USD), plan, planSince
 *   use:<day>:<principal>   hash   freeUsed, freeHeld, tokUsed, tokHeld for one UTC day; expires two days
 *                                  after the day ends
 *   hold:<callId>           hash   an open reservation: pid, day, micro, tok, free, billing, exp
 *   holds                   zset   open reservations by expiry (epoch ms, the Redis server's clock): the
 *                                  sweep's index
 *   grant:<operationId>     string the grant applied under that operation id (JSON), kept for good
 *   r:<id>, rd:<day>:<principal>   receipts and their day index (receipts/redis-receipts.ts)
 *   log:size, log:h:0:<chunk>      the receipt's leaf, sequenced in the same script (receipts/redis-log.ts)
 *   j:<jobId>, jlease              the call's job, opened and closed in the same scripts (jobs/redis-store.ts)
 * Integers stay below 2^53, so Lua's doubles hold them exactly; HINCRBY keeps them as integers.
 *
 * Expiry is written and judged on one clock, the Redis server's (`TIME`): a gateway sends how long a hold
 * may stay open, never an end read off its own clock, so an instance whose clock runs ahead cannot release
 * (and so make free) the calls other instances are still running. Only a meter given a clock of its own
 * (`now`, which tests use to cross a day or expire holds without waiting) sends its time instead.
 */
import type { RedisJobStore } from '../jobs/redis-store.js';
import { JOB_LIB } from '../jobs/redis-store.js';
import { DECISION_LIB } from '../decisions/redis-store.js';
import type { DecisionRide } from '../decisions/store.js';
import { RECEIPT_LIBS, receiptKeys } from '../receipts/redis-receipts.js';
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { Receipt } from '../store/store.js';
import type { JobClosing, JobOpening } from './ledger.js';
import { admission, admissionArgs, refusal } from './limits.js';
import {
  consumption,
  dayTtlSeconds,
  quote,
  settlementOf,
  utcDay,
  type BillingStatus,
  type DayUsage,
  type ClawbackRequest,
  type ClawbackResult,
  type GrantRecord,
  type GrantRequest,
  type GrantResult,
  type Meter,
  type Reservation,
  type ReserveRequest,
  type SettleInput,
  type Settlement,
} from './meter.js';
import type { MeterOptions } from './memory-meter.js';

// Each script is its own file, preceded by the libraries it calls: composed once, at load (store/lua.ts).
const HOLD_LIB = 'lua/hold.lib.lua';
const RESERVE = loadLua(import.meta.url, HOLD_LIB, 'lua/admission.lib.lua', JOB_LIB, DECISION_LIB, 'lua/reserve.lua');
const SETTLE = loadLua(import.meta.url, HOLD_LIB, ...RECEIPT_LIBS, JOB_LIB, 'lua/settle.lua');
const RELEASE = loadLua(import.meta.url, HOLD_LIB, 'lua/release.lua');
const SWEEP = loadLua(import.meta.url, HOLD_LIB, 'lua/sweep.lua');
const STATUS = loadLua(import.meta.url, HOLD_LIB, 'lua/status.lua');
const GRANT = loadLua(import.meta.url, 'lua/grant.lua');
const CLAWBACK = loadLua(import.meta.url, 'lua/clawback.lua');
/** Where the reserve's arguments say whether a decision record rides (dk, then da): after the admission's six and the hold's six. */
const RESERVE_DK = 12;

/** A reply of named fields ({name, value, ...}, as the ledger's scripts answer) as an object. */
function named(reply: unknown): Record<string, unknown> {
  if (!Array.isArray(reply)) throw new TypeError(`unexpected meter reply: ${typeof reply}`);
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = reply[i + 1];
  return out;
}

export interface RedisMeterOptions extends MeterOptions {
  /** Where the calls' jobs live: the ledger opens and closes them in its own scripts. */
  jobs?: RedisJobStore;
}

const int = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export class RedisMeter implements Meter {
  readonly kind = 'redis' as const;
  readonly #store: RedisStore;
  readonly #prefix: string;
  readonly #now: () => number;
  readonly #ownClock: boolean;
  readonly #jobs: RedisJobStore | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(store: RedisStore, options: RedisMeterOptions) {
    this.#store = store;
    this.#prefix = store.keyPrefix;
    this.#now = options.now ?? Date.now;
    this.#ownClock = options.now !== undefined;
    this.#jobs = options.jobs;
  }

  #jobStore(): RedisJobStore {
    if (!this.#jobs) throw new TypeError('this meter was made without a job store');
    return this.#jobs;
  }

  today(): string {
    return utcDay(this.#now());
  }

  /** The time the scripts judge expiry by: '' (the Redis server's clock) unless the meter was given a clock. */
  #clock(): string {
    return this.#ownClock ? String(this.#now()) : '';
  }

  #bill(pid: string) {
    return `${this.#prefix}bill:${pid}`;
  }
  #use(day: string, pid: string) {
    return `${this.#prefix}use:${day}:${pid}`;
  }
  #hold(callId: string) {
    return `${this.#prefix}hold:${callId}`;
  }

  async reserve(req: ReserveRequest, job?: JobOpening, decision?: DecisionRide): Promise<Reservation> {
    const now = this.#now();
    const day = utcDay(now);
    const a = admission(req);
    const keys = [this.#bill(req.principalId), this.#use(day, req.principalId), this.#hold(req.callId), `${this.#prefix}holds`, this.#prefix];
    // The admission, then the hold (lua/reserve.lua has the order); dk and da stay '' unless a decision rides.
    const args = admissionArgs(a);
    args.push(req.callId, req.principalId, day, String(req.ttlMs), String(dayTtlSeconds(day, now)), this.#ownClock ? String(now) : '', '', '');
    if (job) {
      const jobs = this.#jobStore();
      keys.push(...jobs.keys(job.job.jobId));
      args.push(...jobs.openArgs(job.job, job.retentionMs));
    }
    if (decision) {
      // The call's decision record rides in this write: the index of its first key and argument (Lua counts from 1).
      args[RESERVE_DK] = String(keys.length + 1);
      args[RESERVE_DK + 1] = String(args.length + 1);
      keys.push(...decision.keys);
      args.push(...decision.args);
    }
    let reply: unknown;
    try {
      reply = await this.#store.runScript('meter.reserve', RESERVE, keys, args);
    } catch (err) {
      decision?.failed((err as Error).name);
      throw err;
    }
    const r = named(reply);
    if (decision && r['decisionFailed'] !== undefined) decision.failed('script');
    if (r['kind'] === 'ceiling') throw refusal(req, a.costMicroUSD, day, { kind: 'ceiling', rungTokens: int(r['rungTokens']) });
    if (r['kind'] === 'credits') {
      const v = {
        kind: 'credits' as const,
        granted: int(r['granted']),
        available: int(r['available']),
        rungTokens: int(r['rungTokens']),
        freeCount: int(r['freeCount']),
      };
      throw refusal(req, a.costMicroUSD, day, v);
    }
    if (r['kind'] !== 'ok' && r['kind'] !== 'held') throw new TypeError(`unexpected meter reply: ${String(r['kind'])}`);
    const billing = r['billing'] === 'free' ? 'free' : 'paid';
    // A repeated reserve answers the first one's reservation, its day included (it may have been yesterday).
    const heldDay = r['kind'] === 'held' && typeof r['day'] === 'string' ? r['day'] : day;
    const reservation: Reservation = {
      callId: req.callId,
      principalId: req.principalId,
      billing,
      reservedMicroUSD: int(r['micro']),
      reservedTokens: req.estimatedTokens,
      day: heldDay,
      rates: req.rates,
      freeUnit: billing === 'free' ? req.limits.free.unit : null,
      rungCounted: req.limits.rung !== null,
      expiresAt: int(r['expiresAt']),
    };
    if (job && r['kind'] === 'ok') job.opened(this.#jobStore().opened([r['jobCreated'], r['job']]));
    return reservation;
  }

  /** One settle script: mode `settle` (charge against the hold) or `late` (the hold was swept: the receipt alone). */
  async #settleScript(
    reservation: Reservation,
    receipt: Receipt,
    s: Settlement,
    input: SettleInput,
    mode: 'settle' | 'late',
    job: JobClosing | undefined,
  ): Promise<Record<string, unknown>> {
    const k = receiptKeys(this.#prefix, receipt);
    const c = consumption(reservation, s, input);
    const keys = [
      this.#hold(reservation.callId),
      this.#bill(reservation.principalId),
      this.#use(reservation.day, reservation.principalId),
      k.receipt,
      k.index,
      `${this.#prefix}holds`,
      this.#prefix,
    ];
    // The settlement in plain arguments (lua/settle.lua has the order), then the receipt.
    const args = [reservation.callId, receipt.id, k.score, String(s.chargedMicroUSD), String(c.free), String(c.rungTokens), k.leaf, mode, k.json];
    if (job) {
      const jobs = this.#jobStore();
      keys.push(...jobs.keys(job.jobId));
      args.push(...jobs.updateArgs(job.jobId, job.owner, job.patch, job.retentionMs));
    }
    const r = named(await this.#store.runScript('meter.settle', SETTLE, keys, args));
    if (job && r['outcome'] === 'ok') job.closed(r['jobClosed'] === 1);
    return r;
  }

  async settle(reservation: Reservation, input: SettleInput, build: (s: Settlement) => Receipt, job?: (s: Settlement) => JobClosing): Promise<Settlement> {
    const s = quote(reservation, input);
    const receipt = { ...build(s), day: reservation.day };
    const reply = await this.#settleScript(reservation, receipt, s, input, 'settle', job?.(s));
    if (reply['outcome'] === 'dup') return settlementOf(JSON.parse(String(reply['receipt'])) as Receipt, s);
    if (reply['outcome'] === 'ok') return s;
    // The reservation was swept before settlement (the call outlived it): record the call, charge nothing.
    const late: Settlement = { ...s, chargedMicroUSD: 0, note: 'reservation-expired' };
    const lateReceipt = { ...build(late), day: reservation.day };
    const again = await this.#settleScript(reservation, lateReceipt, late, input, 'late', job?.(late));
    return again['outcome'] === 'dup' ? settlementOf(JSON.parse(String(again['receipt'])) as Receipt, late) : late;
  }

  async release(reservation: Reservation): Promise<void> {
    await this.#store.runScript('meter.release', RELEASE, [this.#prefix], [reservation.callId]);
  }

  async record(receipt: Receipt): Promise<Receipt> {
    const dated = { ...receipt, day: receipt.day ?? this.today() };
    await this.#store.putReceipt(dated);
    return dated;
  }

  async status(principalId: string): Promise<BillingStatus> {
    const [g, s, r, plan] = (await this.#store.runScript('meter.status', STATUS, [this.#bill(principalId), this.#prefix], [this.#clock()])) as unknown[];
    const granted = int(g);
    const spent = int(s);
    const reserved = int(r);
    return {
      status: 'connected',
      plan: typeof plan === 'string' ? plan : null,
      balances: [{ scope: 'ai', grantedMicroUSD: granted, spentMicroUSD: spent, reservedMicroUSD: reserved, availableMicroUSD: granted - spent - reserved }],
    };
  }

  async usage(principalId: string, day: string): Promise<DayUsage> {
    const [fu, fh, tu, th] = await this.#store.command('meter.usage', (c) =>
      c.hmGet(this.#use(day, principalId), ['freeUsed', 'freeHeld', 'tokUsed', 'tokHeld']),
    );
    return { day, freeUsed: int(fu), freeHeld: int(fh), rungTokensUsed: int(tu), rungTokensHeld: int(th) };
  }

  async grant(req: GrantRequest): Promise<GrantResult> {
    const record: GrantRecord = { ...req, at: new Date(this.#now()).toISOString() };
    const reply = (await this.#store.runScript(
      'meter.grant',
      GRANT,
      [`${this.#prefix}grant:${req.operationId}`, this.#bill(req.principalId)],
      [JSON.stringify(record), String(req.microUSD), req.kind === 'plan' && req.plan ? req.plan : '', record.at],
    )) as unknown[];
    return { applied: reply[0] === 'ok', grant: JSON.parse(String(reply[1])) as GrantRecord };
  }

  async grantOf(operationId: string): Promise<GrantRecord | null> {
    const raw = await this.#store.command('meter.grant-of', (c) => c.get(`${this.#prefix}grant:${operationId}`));
    if (typeof raw !== 'string') return null;
    const g = JSON.parse(raw) as GrantRecord;
    return g.kind === 'credits' || g.kind === 'plan' ? g : null;
  }

  async clawback(req: ClawbackRequest): Promise<ClawbackResult> {
    const reply = (await this.#store.runScript(
      'meter.clawback',
      CLAWBACK,
      [`${this.#prefix}grant:${req.operationId}`, this.#bill(req.principalId), `${this.#prefix}claw:${req.claimKey}`],
      [String(req.targetMicroUSD), new Date(this.#now()).toISOString()],
    )) as unknown[];
    const r = JSON.parse(String(reply[1])) as { taken?: number; waived?: number };
    return { applied: reply[0] === 'ok', takenMicroUSD: int(r.taken), waivedMicroUSD: int(r.waived) };
  }

  async sweep(limit = 1000): Promise<number> {
    return int(await this.#store.runScript('meter.sweep', SWEEP, [this.#prefix], [this.#clock(), String(limit)]));
  }

  start(everyMs = 30_000): void {
    this.#timer ??= setInterval(() => void this.sweep().catch(() => undefined), everyMs).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
