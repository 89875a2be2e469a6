/**
 * The job engine: every call runs as a job, created one way: `claim`ed for this instance, opened in its
 * call's reservation (`opening`, one ledger write for both — or that write finds the live job of an
 * identical request, to attach to) and run here with `runCreated`; `wait`
 * waits for a job to finish, here or on any other instance sharing the store, up to a deadline. A job's
 * end is normally written in its settlement's write (`JobEnding`); jobs are marked running in batches.
 *
 * Writes a job's runner makes name their owner, so a runner that lost its lease cannot overwrite what a
 * sweeper decided.
 *
 * Liveness across instances: a runner holds a lease on each of its jobs and renews it every third of the
 * lease. Every instance sweeps: a job whose lease ran out (its instance died) is failed `job-interrupted`
 * and its reservation released — within `leaseMs` + `sweepEveryMs` of the death. Leases are judged on the
 * shared store's clock (Redis `TIME`), so an instance whose clock is wrong fails no other's jobs. A job is never run twice:
 * the upstream call may have started on the dead instance, and a second run could charge twice.
 *
 * A job belongs to its principal, not to the connection that made it: a waiter that goes away (a chat
 * client that disconnects during the synchronous wait or a stream) stops waiting and nothing else — the job
 * runs to its end, is settled once, and the identical request or GET /v1/research/job finds its result for
 * `retentionMs`. Every job is cut off after `maxRunMs` (status `expired`).
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { NOTHING_REPORTED, type Meter } from '../metering/meter.js';
import type { JobClosing, JobOpening } from '../metering/ledger.js';
import { TERMINAL, type JobRecord, type JobResult } from './job.js';
import { interruptedReceipt } from '../call/receipt.js';
import type { CreateOutcome, JobStore } from './store.js';
import { isoNow } from '../iso-time.js';

export interface JobSettings {
  leaseMs: number;
  sweepEveryMs: number;
  retentionMs: number;
  pollAfterMs: number;
  maxRunMs: number;
  upstreamRetries: number;
}

/** How often jobs started here are marked running (at most; a third of the lease if that is shorter). */
const MARK_EVERY_MS = 1000;

/**
 * What a job's runner gets besides its abort signal: the way to end the job in its settlement's own write
 * (a closing the ledger writes in the settlement), so that the answer, its charge and its receipt land in one atomic write.
 */
export interface JobEnding {
  succeeded(result: JobResult): JobClosing;
}

export type JobRun = (signal: AbortSignal, ending: JobEnding) => Promise<JobResult>;

interface Running {
  done: Promise<JobRecord>;
  abort: AbortController;
}

export class JobEngine {
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  readonly #running = new Map<string, Running>();
  /** Jobs started here and not yet marked running in the store. */
  readonly #starting = new Set<string>();
  #timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly jobs: JobStore,
    private readonly meter: Meter,
    private readonly log: Logger,
    private readonly settings: () => JobSettings,
    /** This instance's clock. Lease ends are stamped on it; a shared store judges them on its own (redis-store.ts). */
    private readonly now: () => number = Date.now,
  ) {}

  /** Starts the running marks, the lease renewal and the sweeper. */
  start(): void {
    const s = this.settings();
    this.#timers.push(setInterval(() => void this.#markRunning(), Math.min(MARK_EVERY_MS, Math.max(50, Math.floor(s.leaseMs / 3)))).unref());
    this.#timers.push(setInterval(() => void this.#renew(), Math.max(50, Math.floor(s.leaseMs / 3))).unref());
    this.#timers.push(setInterval(() => void this.sweep(), s.sweepEveryMs).unref());
  }

  /** `job` as this instance creates it: owned here, under a fresh lease. */
  claim(job: JobRecord): JobRecord {
    return { ...job, owner: this.instanceId, leaseUntil: this.now() + this.settings().leaseMs };
  }

  /**
   * Opens a job in its call's reservation (the meter stage, through the ledger), so creating it costs no
   * write of its own. `job` comes from `claim`; once created, `runCreated` runs it.
   */
  opening(job: JobRecord, opened: (outcome: CreateOutcome) => void): JobOpening {
    return { job, retentionMs: this.settings().retentionMs, opened };
  }

  /** Runs a job created through `opening`. */
  runCreated(job: JobRecord, run: JobRun): void {
    this.#run(job, run);
  }

  /** Fails a job created through `opening` that will not run (its call failed before the hand-over). */
  async abandon(job: JobRecord, error: GatewayError): Promise<void> {
    const patch: Partial<JobRecord> = { status: 'failed', error: { code: error.code, message: error.message }, updatedAt: new Date().toISOString() };
    await this.jobs.update(job.jobId, this.instanceId, patch, this.settings().retentionMs).catch((err: Error) =>
      // Its lease then runs out and a sweeper fails it.
      this.log.warn('job.abandon.failed', { jobId: job.jobId, error: err.name }),
    );
  }

  #run(job: JobRecord, run: JobRun): void {
    const s = this.settings();
    // One controller for both ways a job is stopped (its gateway stops, or it runs out of time): one timer
    // per job, cleared when it ends, rather than AbortSignal.timeout + AbortSignal.any objects on every call.
    const abort = new AbortController();
    const signal = abort.signal;
    const expiry = { aborted: false };
    const deadline = setTimeout(() => {
      expiry.aborted = true;
      abort.abort(new GatewayError('job-expired', `the job ran longer than ${s.maxRunMs} ms and was stopped`));
    }, s.maxRunMs);
    deadline.unref();
    /** Set when the job's end rode along with its settlement: the record as that write left it, or null. */
    let ended: { job: JobRecord | null } | undefined;
    const ending: JobEnding = {
      succeeded: (result) => {
        const patch: Partial<JobRecord> = { status: 'succeeded', result, updatedAt: isoNow() };
        return {
          jobId: job.jobId,
          owner: this.instanceId,
          patch,
          retentionMs: s.retentionMs,
          closed: (applied) => {
            ended = { job: applied ? { ...job, ...patch } : null };
          },
        };
      },
    };
    const finish = async (patch: Partial<JobRecord>): Promise<JobRecord> => {
      const updated = await this.jobs.update(job.jobId, this.instanceId, { ...patch, updatedAt: isoNow() }, s.retentionMs).catch((err: Error) => {
        this.log.error('job.update.failed', { jobId: job.jobId, error: err.name });
        return null;
      });
      // null: the lease was lost and a sweeper decided; what it stored is the truth.
      return updated ?? (await this.jobs.get(job.jobId)) ?? { ...job, ...patch };
    };
    const done = (async () => {
      try {
        // Marked running by the next batch of marks (#markRunning), not here: the mark is neither on the
        // answer's path nor a write of its own, and it never overwrites an end written before it.
        this.#starting.add(job.jobId);
        const result = await run(signal, ending);
        // null: the lease was lost and a sweeper decided; what it stored is the truth.
        if (ended) return ended.job ?? (await this.jobs.get(job.jobId)) ?? { ...job, status: 'succeeded', result };
        return await finish({ status: 'succeeded', result });
      } catch (err) {
        const e = expiry.aborted
          ? new GatewayError('job-expired', `the job ran longer than ${s.maxRunMs} ms and was stopped`)
          : signal.aborted
            ? signal.reason instanceof GatewayError
              ? signal.reason
              : new GatewayError('job-interrupted')
            : err instanceof GatewayError
              ? err
              : new GatewayError('internal-error');
        if (!(err instanceof GatewayError)) this.log.error('job.failed', { jobId: job.jobId, error: (err as Error)?.name });
        return await finish({ status: expiry.aborted ? 'expired' : 'failed', error: { code: e.code, message: e.message } });
      } finally {
        clearTimeout(deadline);
        this.#starting.delete(job.jobId);
        this.#running.delete(job.jobId);
      }
    })();
    // An async job's `done` has no waiter: when its end cannot be written nor read back (the store went down
    // as it ended), the rejection must not end the process. Waiters still see it; the lease runs out and a
    // sweeper fails the job and releases what it held.
    done.catch(() => undefined);
    this.#running.set(job.jobId, { done, abort });
  }

  /**
   * Waits for the job to end, up to `timeoutMs`; resolves to the job as it then is (terminal or not). A
   * waiter whose `signal` aborts stops waiting (resolves null); the job goes on.
   */
  wait(jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<JobRecord | null> {
    const local = this.#running.get(jobId);
    if (!local) return this.#poll(jobId, timeoutMs, signal);
    // One promise settled by whichever comes first (every chat call waits here): not a race of three.
    return new Promise<JobRecord | null>((resolve, reject) => {
      let open = true;
      const end = (): boolean => {
        if (!open) return false;
        open = false;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const onAbort = () => {
        if (end()) resolve(null);
      };
      const settle = (job: JobRecord | null) => {
        if (end()) resolve(job);
      };
      const fail = (err: Error) => {
        if (end()) reject(err);
      };
      // Out of time: the job as the store has it then, unless the job ends first.
      const timer = setTimeout(() => void this.jobs.get(jobId).then(settle, fail), timeoutMs);
      if (signal?.aborted) onAbort();
      else signal?.addEventListener('abort', onAbort, { once: true });
      local.done.then(settle, fail);
    });
  }

  /**
   * Waiting on a job another instance runs: poll the store, backing off to the poll interval. A waiter that
   * goes away is let go at once (null, as for a job run here), not at the next poll.
   */
  async #poll(jobId: string, timeoutMs: number, signal?: AbortSignal): Promise<JobRecord | null> {
    const deadline = Date.now() + timeoutMs;
    let delay = 25;
    for (;;) {
      const job = await this.jobs.get(jobId);
      if (signal?.aborted) return null;
      if (!job || TERMINAL.has(job.status) || Date.now() >= deadline) return job;
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(delay, Math.max(1, deadline - Date.now())));
        signal?.addEventListener('abort', wake, { once: true });
      });
      delay = Math.min(delay * 2, this.settings().pollAfterMs);
    }
  }

  /** One write for every job that started since the last batch and still runs. */
  async #markRunning(): Promise<void> {
    if (this.#starting.size === 0) return;
    const ids = [...this.#starting];
    this.#starting.clear();
    await this.jobs
      .markRunning(this.instanceId, ids, new Date().toISOString())
      .catch((err: Error) => this.log.warn('job.mark.failed', { jobs: ids.length, error: err.name }));
  }

  async #renew(): Promise<void> {
    const ids = [...this.#running.keys()];
    if (ids.length === 0) return;
    await this.jobs
      .renew(this.instanceId, ids, this.now() + this.settings().leaseMs)
      .catch((err: Error) => this.log.warn('job.lease.renew.failed', { jobs: ids.length, error: err.name }));
  }

  /** Fails jobs whose runner died and releases what they held. Returns how many it failed. */
  async sweep(now = this.now()): Promise<number> {
    const s = this.settings();
    let swept: JobRecord[];
    try {
      swept = await this.jobs.sweep(now, 100, s.retentionMs, s.leaseMs);
    } catch (err) {
      this.log.warn('job.sweep.failed', { error: (err as Error).name });
      return 0;
    }
    for (const job of swept) {
      this.log.warn('job.interrupted', { jobId: job.jobId, owner: job.owner });
      // Release what it held and write its receipt in one settlement; if its runner (or an earlier sweep)
      // settled first, the receipt is there and this changes nothing. Only a settlement made is acknowledged:
      // one lost to an outage is made by a later sweep.
      try {
        await this.meter.settle(job.reservation, NOTHING_REPORTED, (st) => interruptedReceipt(job, st, new Date(now)));
        await this.jobs.sweepSettled(job);
      } catch (err) {
        this.log.warn('job.sweep.settle_failed', { jobId: job.jobId, error: (err as Error).name });
      }
    }
    return swept.length;
  }

  /**
   * Resolves true once no job runs here, or false when `timeoutMs` passes first: graceful shutdown lets the
   * jobs in flight end (keeping their leases) before it closes the engine.
   */
  async idle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.#running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.#running.values()].map((r) => r.done)), new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
    return true;
  }

  /** Stops renewing and sweeping, and cancels what still runs here (their leases will lapse). */
  async close(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#timers = [];
    const pending = [...this.#running.values()];
    // The instance stops: the job's caller is told to resend (503 job-interrupted), as when a sweep finds it.
    for (const r of pending) r.abort.abort(new GatewayError('job-interrupted', 'the gateway stopped while the job ran; resend to run it again'));
    await Promise.allSettled(pending.map((r) => r.done));
  }
}
