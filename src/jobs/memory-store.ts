/**
 * Jobs in one process, for the embedded default: the same semantics as the Redis job store (contract suite
 * in test/jobs/job-store.test.ts), records copied in and out so no caller shares state with the store.
 */
import { TERMINAL, type JobRecord } from './job.js';
import type { IdempotencyEntry, JobStore } from './store.js';

const copy = <T>(v: T): T => structuredClone(v);

export class MemoryJobStore implements JobStore {
  #jobs = new Map<string, { job: JobRecord; expiresAt: number }>();
  #keys = new Map<string, { entry: IdempotencyEntry; expiresAt: number }>();
  /** Swept jobs whose settlement is not yet acknowledged: when a sweep returns each again, and which attempt. */
  #unsettled = new Map<string, { dueAt: number; updatedAt: string }>();

  /** The job as swept, while it is still that attempt (a job resent since is a new one under the same id). */
  #swept(jobId: string, updatedAt: string): JobRecord | null {
    const job = this.#live(jobId);
    return job && job.status === 'failed' && job.updatedAt === updatedAt ? job : null;
  }

  #live(jobId: string): JobRecord | null {
    const hit = this.#jobs.get(jobId);
    if (!hit) return null;
    if (hit.expiresAt <= Date.now()) {
      this.#jobs.delete(jobId);
      return null;
    }
    return hit.job;
  }

  /**
   * Creates the job unless a live one has its id, in one synchronous step: the memory ledger opens a call's
   * job this way inside its reservation (src/metering/memory-meter.ts).
   */
  openNow(job: JobRecord, retentionMs: number): { created: boolean; job: JobRecord } {
    const current = this.#live(job.jobId);
    // A swept job whose settlement is not yet made is not replaced: its reservation and receipt would be lost.
    const unsettled = current && this.#swept(job.jobId, this.#unsettled.get(job.jobId)?.updatedAt ?? '');
    if (current && ((current.status !== 'failed' && current.status !== 'expired') || unsettled)) return { created: false, job: copy(current) };
    this.#jobs.set(job.jobId, { job: copy(job), expiresAt: Date.now() + retentionMs });
    return { created: true, job: copy(job) };
  }

  async createOrAttach(job: JobRecord, retentionMs: number) {
    return this.openNow(job, retentionMs);
  }

  async get(jobId: string) {
    const job = this.#live(jobId);
    return job ? copy(job) : null;
  }

  /** `update` in one synchronous step: the memory ledger closes a call's job this way inside its settlement. */
  updateNow(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number): JobRecord | null {
    const job = this.#live(jobId);
    if (!job || job.owner !== owner || TERMINAL.has(job.status)) return null;
    const next = { ...job, ...copy(patch) };
    this.#jobs.set(jobId, { job: next, expiresAt: Date.now() + retentionMs });
    return copy(next);
  }

  async update(jobId: string, owner: string, patch: Partial<JobRecord>, retentionMs: number) {
    return this.updateNow(jobId, owner, patch, retentionMs);
  }

  async markRunning(owner: string, jobIds: string[], updatedAt: string) {
    for (const id of jobIds) {
      const job = this.#live(id);
      if (job && job.owner === owner && job.status === 'queued') Object.assign(job, { status: 'running', updatedAt });
    }
  }

  async renew(owner: string, jobIds: string[], leaseUntil: number) {
    for (const id of jobIds) {
      const job = this.#live(id);
      if (job && job.owner === owner && !TERMINAL.has(job.status)) job.leaseUntil = leaseUntil;
    }
  }

  async sweep(now: number, limit: number, retentionMs: number, retryMs: number) {
    const out: JobRecord[] = [];
    for (const [id, { dueAt, updatedAt }] of this.#unsettled) {
      const job = this.#swept(id, updatedAt);
      if (!job) this.#unsettled.delete(id);
      else if (dueAt <= now && out.length < limit) {
        this.#unsettled.set(id, { dueAt: now + retryMs, updatedAt });
        out.push(copy(job));
      }
    }
    for (const [id] of this.#jobs) {
      if (out.length >= limit) break;
      const job = this.#live(id);
      if (!job || TERMINAL.has(job.status) || job.leaseUntil >= now) continue;
      const failed: JobRecord = {
        ...job,
        status: 'failed',
        error: { code: 'job-interrupted', message: 'the gateway instance running this job stopped; resend the request to run it again' },
        updatedAt: new Date(now).toISOString(),
      };
      this.#jobs.set(id, { job: failed, expiresAt: now + retentionMs });
      this.#unsettled.set(id, { dueAt: now + retryMs, updatedAt: failed.updatedAt });
      out.push(copy(failed));
    }
    return out;
  }

  async sweepSettled(job: JobRecord) {
    if (this.#unsettled.get(job.jobId)?.updatedAt === job.updatedAt) this.#unsettled.delete(job.jobId);
  }

  async idempotencyBinding(principalId: string, key: string) {
    const hit = this.#keys.get(`${principalId}\n${key}`);
    return hit && hit.expiresAt > Date.now() ? copy(hit.entry) : null;
  }

  async bindIdempotencyKey(principalId: string, key: string, entry: IdempotencyEntry, retentionMs: number) {
    const k = `${principalId}\n${key}`;
    const hit = this.#keys.get(k);
    if (hit && hit.expiresAt > Date.now()) return copy(hit.entry);
    this.#keys.set(k, { entry: copy(entry), expiresAt: Date.now() + retentionMs });
    return null;
  }

  async close() {}
}
