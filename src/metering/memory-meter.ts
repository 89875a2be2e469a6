/**
 * The meter in one process, beside the memory store: the same rules and the same answers as the Redis meter
 * (the contract suite runs both), without durability. Every method does its checks and its changes with no
 * await in between, so calls in flight cannot interleave inside one of them — the atomicity Redis gets
 * from a script. Receipts go to the store it was given, which sequences each in the receipt log; a call's
 * job is opened and closed in the same synchronous step as its money, on the memory job store it was given.
 */
import type { MemoryJobStore } from '../jobs/memory-store.js';
import type { Receipt, Store } from '../store/store.js';
import { admission, decide, refusal, type Balance, type DayCounters } from './limits.js';
import type { JobClosing, JobOpening } from './ledger.js';
import type { DecisionRide } from '../decisions/store.js';
import {
  consumption,
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

interface Hold {
  principalId: string;
  day: string;
  micro: number;
  rungTokens: number;
  free: number;
  billing: Reservation['billing'];
  expiresAt: number;
}

interface Account extends Balance {
  plan: string | null;
}

export interface MeterOptions {
  /** The clock (epoch ms); injectable so tests can cross a UTC midnight. */
  now?: () => number;
}

export interface MemoryMeterOptions extends MeterOptions {
  /** Where the calls' jobs are opened and closed; without it the meter takes no job. */
  jobs?: MemoryJobStore;
}

export class MemoryMeter implements Meter {
  readonly kind = 'memory' as const;
  readonly #now: () => number;
  readonly #store: Store;
  readonly #accounts = new Map<string, Account>();
  readonly #days = new Map<string, DayCounters>();
  readonly #holds = new Map<string, Hold>();
  readonly #grants = new Map<string, GrantRecord>();
  /** Clawbacks by operation id, and how much of each claim was settled. */
  readonly #clawbacks = new Map<string, { taken: number; waived: number }>();
  readonly #claims = new Map<string, number>();
  /** Settled call ids and the receipt written for each: what makes settlement apply once. */
  readonly #settled = new Map<string, Receipt>();
  readonly #jobs: MemoryJobStore | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(store: Store, options: MemoryMeterOptions) {
    this.#store = store;
    this.#now = options.now ?? Date.now;
    this.#jobs = options.jobs;
  }

  #jobStore(): MemoryJobStore {
    if (!this.#jobs) throw new TypeError('this meter was made without a job store');
    return this.#jobs;
  }

  /** Closes a call's job in the settlement's step (`job` given): the owner's change, if it still owns it. */
  #close(job: ((s: Settlement) => JobClosing) | undefined, s: Settlement): void {
    if (!job) return;
    const c = job(s);
    c.closed(this.#jobStore().updateNow(c.jobId, c.owner, c.patch, c.retentionMs) !== null);
  }

  today(): string {
    return utcDay(this.#now());
  }

  #account(id: string): Account {
    let a = this.#accounts.get(id);
    if (!a) this.#accounts.set(id, (a = { granted: 0, spent: 0, reserved: 0, plan: null }));
    return a;
  }

  #day(principalId: string, day: string): DayCounters {
    const key = `${day} ${principalId}`;
    let d = this.#days.get(key);
    if (!d) this.#days.set(key, (d = { freeUsed: 0, freeHeld: 0, rungTokensUsed: 0, rungTokensHeld: 0 }));
    return d;
  }

  #release(callId: string): void {
    const h = this.#holds.get(callId);
    if (!h) return;
    this.#holds.delete(callId);
    this.#account(h.principalId).reserved -= h.micro;
    const d = this.#day(h.principalId, h.day);
    d.rungTokensHeld -= h.rungTokens;
    d.freeHeld -= h.free;
  }

  #sweep(now: number, limit: number): number {
    let n = 0;
    for (const [id, h] of this.#holds) {
      if (n >= limit) break;
      if (h.expiresAt <= now) {
        this.#release(id);
        n += 1;
      }
    }
    return n;
  }

  async reserve(req: ReserveRequest, job?: JobOpening, decision?: DecisionRide): Promise<Reservation> {
    // No store of decision records here to write it in: it goes on its own.
    decision?.alone();
    const now = this.#now();
    const day = utcDay(now);
    const a = admission(req);
    this.#sweep(now, 16);
    const reservation = (billing: Reservation['billing'], micro: number, expiresAt: number, heldDay = day): Reservation => ({
      callId: req.callId,
      principalId: req.principalId,
      billing,
      reservedMicroUSD: micro,
      reservedTokens: req.estimatedTokens,
      day: heldDay,
      rates: req.rates,
      freeUnit: billing === 'free' ? req.limits.free.unit : null,
      rungCounted: req.limits.rung !== null,
      expiresAt,
    });
    const held = this.#holds.get(req.callId);
    // A repeated reserve answers the first one's reservation, its day included (it may have been yesterday).
    if (held) return reservation(held.billing, held.micro, held.expiresAt, held.day);
    const counters = this.#day(req.principalId, day);
    const account = this.#account(req.principalId);
    const v = decide(a, counters, account);
    if (v.kind !== 'ok') throw refusal(req, a.costMicroUSD, day, v);
    const expiresAt = now + req.ttlMs;
    account.reserved += v.micro;
    counters.freeHeld += v.freeHold;
    counters.rungTokensHeld += v.rungHold;
    this.#holds.set(req.callId, { principalId: req.principalId, day, micro: v.micro, rungTokens: v.rungHold, free: v.freeHold, billing: v.billing, expiresAt });
    const made = reservation(v.billing, v.micro, expiresAt);
    if (job) {
      const r = this.#jobStore().openNow({ ...job.job, billing: made.billing, reservation: made }, job.retentionMs);
      job.opened(r.created ? { created: true } : { created: false, job: r.job });
    }
    return made;
  }

  async settle(reservation: Reservation, input: SettleInput, build: (s: Settlement) => Receipt, job?: (s: Settlement) => JobClosing): Promise<Settlement> {
    const s = quote(reservation, input);
    const previous = this.#settled.get(reservation.callId);
    if (previous) {
      this.#release(reservation.callId); // as Redis does: a receipt stands, nothing stays held for it
      return settlementOf(previous, s);
    }
    const hold = this.#holds.get(reservation.callId);
    if (!hold) {
      // Swept before settlement (the call outlived its reservation): record it, charge nothing.
      const late: Settlement = { ...s, chargedMicroUSD: 0, note: 'reservation-expired' };
      const receipt = { ...build(late), day: reservation.day };
      this.#settled.set(reservation.callId, receipt);
      this.#close(job, late);
      await this.#store.putReceipt(receipt);
      return late;
    }
    // The charge may pass the hold (usage above the bound): all of it is spent, the balance may go below zero.
    const receipt = { ...build(s), day: reservation.day };
    const c = consumption(reservation, s, input);
    this.#release(reservation.callId);
    this.#account(hold.principalId).spent += s.chargedMicroUSD;
    const d = this.#day(hold.principalId, hold.day);
    if (hold.rungTokens > 0) d.rungTokensUsed += c.rungTokens;
    if (hold.free > 0) d.freeUsed += c.free;
    this.#settled.set(reservation.callId, receipt);
    this.#close(job, s);
    await this.#store.putReceipt(receipt);
    return s;
  }

  async release(reservation: Reservation): Promise<void> {
    this.#release(reservation.callId);
  }

  async record(receipt: Receipt): Promise<Receipt> {
    const dated = { ...receipt, day: receipt.day ?? this.today() };
    await this.#store.putReceipt(dated);
    return dated;
  }

  async status(principalId: string): Promise<BillingStatus> {
    this.#sweep(this.#now(), 16);
    const a = this.#accounts.get(principalId) ?? { granted: 0, spent: 0, reserved: 0, plan: null };
    return {
      status: 'connected',
      plan: a.plan,
      balances: [
        { scope: 'ai', grantedMicroUSD: a.granted, spentMicroUSD: a.spent, reservedMicroUSD: a.reserved, availableMicroUSD: a.granted - a.spent - a.reserved },
      ],
    };
  }

  async usage(principalId: string, day: string): Promise<DayUsage> {
    const d = this.#days.get(`${day} ${principalId}`);
    return { day, freeUsed: d?.freeUsed ?? 0, freeHeld: d?.freeHeld ?? 0, rungTokensUsed: d?.rungTokensUsed ?? 0, rungTokensHeld: d?.rungTokensHeld ?? 0 };
  }

  async grant(req: GrantRequest): Promise<GrantResult> {
    const previous = this.#grants.get(req.operationId);
    if (previous) return { applied: false, grant: { ...previous } };
    const record: GrantRecord = { ...req, at: new Date(this.#now()).toISOString() };
    const a = this.#account(req.principalId);
    a.granted += req.microUSD;
    if (req.kind === 'plan' && req.plan) a.plan = req.plan;
    this.#grants.set(req.operationId, record);
    return { applied: true, grant: { ...record } };
  }

  async grantOf(operationId: string): Promise<GrantRecord | null> {
    const g = this.#grants.get(operationId);
    return g ? { ...g } : null;
  }

  async clawback(req: ClawbackRequest): Promise<ClawbackResult> {
    const previous = this.#clawbacks.get(req.operationId);
    if (previous) return { applied: false, takenMicroUSD: previous.taken, waivedMicroUSD: previous.waived };
    const want = Math.max(0, req.targetMicroUSD - (this.#claims.get(req.claimKey) ?? 0));
    const a = this.#account(req.principalId);
    const take = Math.min(want, Math.max(0, a.granted - a.spent));
    a.granted -= take;
    if (want > 0) this.#claims.set(req.claimKey, (this.#claims.get(req.claimKey) ?? 0) + want);
    this.#clawbacks.set(req.operationId, { taken: take, waived: want - take });
    return { applied: true, takenMicroUSD: take, waivedMicroUSD: want - take };
  }

  async sweep(limit = 1000): Promise<number> {
    return this.#sweep(this.#now(), limit);
  }

  start(everyMs = 30_000): void {
    this.#timer ??= setInterval(() => void this.sweep(), everyMs).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
