/**
 * Where jobs live: shared by every gateway instance (Redis) or held in one process (memory). A narrow
 * interface with both implementations beside it and one contract suite (test/jobs/job-store.test.ts).
 *
 * Jobs are kept for the configured retention after their last change and then expire. Every write that a
 * runner makes names the owner it believes it is, so a runner that lost its lease (its job was failed by a
 * sweeper) cannot overwrite what the sweeper decided.
 *
 * A call's job is opened in its reservation's write and closed in its settlement's (the ledger's business,
 * src/metering/ledger.ts): each implementation here also offers the ledger beside it what that write needs.
 */
import type { JobRecord } from './job.js';

export interface IdempotencyEntry {
  bodyHash: string;
  jobId: string;
}

/** What creating a job found: created, or a live job with its id (attach to that one instead). */
export type CreateOutcome = { created: true } | { created: false; job: JobRecord };

export interface JobStore {
  /**
   * Creates the job unless a live one (queued, running, succeeded) has its id: then returns that one and
   * `created: false`. A failed or expired job is replaced by the new attempt.
   */
  createOrAttach(job: JobRecord, retentionMs: number): Promise<{ created: boolean; job: JobRecord }>;
  get(jobId: string): Promise<JobRecord | null>;
  /** Applies `patch` only while `owner` still owns a non-terminal job; returns the new record or null. */
  update(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number): Promise<JobRecord | null>;
  /** Moves the owner's queued jobs among `jobIds` to running (a finished job stays as it is). */
  markRunning(owner: string, jobIds: string[], updatedAt: string): Promise<void>;
  /** Extends the lease of the owner's running jobs. */
  renew(owner: string, jobIds: string[], leaseUntil: number): Promise<void>;
  /**
   * Atomically fails every non-terminal job whose lease ended before `now` (code `job-interrupted`) and
   * returns them, so the caller can release their reservations. At most `limit` a call. A swept job is
   * returned again by the sweeps after `retryMs` until `sweepSettled` says its settlement was made: an outage
   * between the two writes must not leave its reservation held and its receipt unwritten.
   */
  sweep(now: number, limit: number, retentionMs: number, retryMs: number): Promise<JobRecord[]>;
  /** The settlement of a swept job (as `sweep` returned it) is made: no later sweep returns it. */
  sweepSettled(job: JobRecord): Promise<void>;
  /** The binding of an idempotency key, if any; binds nothing (a request not yet admitted must not). */
  idempotencyBinding(principalId: string, key: string): Promise<IdempotencyEntry | null>;
  /** Binds an idempotency key to a body and a job, unless bound already: then returns the binding. */
  bindIdempotencyKey(principalId: string, key: string, entry: IdempotencyEntry, retentionMs: number): Promise<IdempotencyEntry | null>;
  close(): Promise<void>;
}
