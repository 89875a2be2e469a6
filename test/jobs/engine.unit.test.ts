/**
 * The job engine's two ways to create a job, on the memory store and meter: a job opened in its
 * reservation (by the ledger) runs with `runCreated` and ends in its settlement's write (no write of its own); one whose
 * call fails before the hand-over is abandoned as failed, not left queued for a sweeper.
 */
import { expect } from 'chai';
import { JobEngine, type JobRun } from '../../src/jobs/engine.js';
import { MemoryJobStore } from '../../src/jobs/memory-store.js';
import type { JobRecord } from '../../src/jobs/job.js';
import { MemoryMeter } from '../../src/metering/memory-meter.js';
import { provisionalReservation, type ReserveRequest } from '../../src/metering/meter.js';
import { MemoryStore } from '../../src/store/memory.js';
import { GatewayError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { CreateOutcome } from '../../src/jobs/store.js';

const SETTINGS = { leaseMs: 15_000, sweepEveryMs: 5_000, retentionMs: 60_000, pollAfterMs: 1_000, maxRunMs: 60_000, upstreamRetries: 0 };
let n = 0;

function world() {
  const store = new MemoryStore();
  const jobs = new MemoryJobStore();
  const meter = new MemoryMeter(store, { jobs });
  const engine = new JobEngine(jobs, meter, silentLogger, () => SETTINGS);
  return { store, meter, jobs, engine };
}

function request(): ReserveRequest {
  return {
    callId: `call-${++n}`,
    principalId: 'did:web:x:tenant:a',
    model: 'shared-general-a',
    task: 'code-review',
    estimatedTokens: 100,
    maxOutputTokens: 90,
    limits: { free: { perDay: 10, unit: 'requests' }, rung: null },
    rates: { inputPerMTok: 900_000, cachedInputPerMTok: 225_000, outputPerMTok: 4_500_000 },
    ttlMs: 60_000,
  };
}

function draft(req: ReserveRequest): JobRecord {
  const at = new Date().toISOString();
  return {
    jobId: `job-${req.callId}`,
    principalId: req.principalId,
    model: req.model,
    task: req.task,
    scopeId: null,
    origin: 'chat',
    status: 'queued',
    billing: 'free',
    receiptId: `rcpt_${req.callId}`,
    callId: req.callId,
    owner: '',
    leaseUntil: 0,
    reservation: provisionalReservation(req),
    createdAt: at,
    updatedAt: at,
  };
}

describe('job engine', () => {
  it('runs a job created in its reservation and ends it in its settlement', async () => {
    const { meter, jobs, engine } = world();
    const req = request();
    const job = engine.claim(draft(req));
    let outcome: CreateOutcome | undefined;
    const reservation = await meter.reserve(
      req,
      engine.opening(job, (o) => (outcome = o)),
    );
    expect(outcome).to.deep.equal({ created: true });
    expect(await jobs.get(job.jobId)).to.include({ status: 'queued', owner: engine.instanceId });
    const run: JobRun = async (_signal, ending) => {
      const result = { completion: { ok: true }, content: 'done', toolCalls: null, finishReason: 'stop' };
      await meter.settle(
        reservation,
        { usage: null, chargeable: true },
        (s) => ({ id: `rcpt_${req.callId}`, callId: req.callId, principalId: req.principalId, createdAt: new Date().toISOString(), billing: s.billing }),
        () => ending.succeeded(result),
      );
      // Ended by the settlement's write, before the runner even returns.
      expect(await jobs.get(job.jobId))
        .to.include({ status: 'succeeded' })
        .and.nested.include({ 'result.content': 'done' });
      return result;
    };
    engine.runCreated({ ...job, reservation }, run);
    const ended = await engine.wait(job.jobId, 5_000);
    expect(ended).to.include({ status: 'succeeded' }).and.nested.include({ 'result.content': 'done' });
  });

  it("abandons a created job whose call failed before the hand-over: failed with the call's error", async () => {
    const { meter, jobs, engine } = world();
    const req = request();
    const job = engine.claim(draft(req));
    await meter.reserve(
      req,
      engine.opening(job, () => undefined),
    );
    await engine.abandon(job, new GatewayError('store-unavailable'));
    expect(await jobs.get(job.jobId))
      .to.include({ status: 'failed' })
      .and.nested.include({ 'error.code': 'store-unavailable' });
  });
});
