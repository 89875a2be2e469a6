/**
 * One contract for both job stores (memory, and Redis on a real redis-server): a live job is attached to,
 * never replaced; a failed one is replaced by a new attempt; only the owner writes, and only until the job
 * is terminal; a sweep fails abandoned jobs exactly once; an idempotency key binds once.
 */
import { expect } from 'chai';
import { MemoryJobStore } from '../../src/jobs/memory-store.js';
import { RedisJobStore } from '../../src/jobs/redis-store.js';
import type { JobStore } from '../../src/jobs/store.js';
import type { JobRecord } from '../../src/jobs/job.js';
import { onRedis } from '../helpers/redis-contract.js';
import { until } from '../helpers/wait.js';

const RETAIN = 60_000;

function job(id: string, patch: Partial<JobRecord> = {}): JobRecord {
  return {
    jobId: id,
    principalId: 'did:web:x:tenant:a',
    model: 'shared-general-a',
    task: 'code-review',
    scopeId: null,
    origin: 'api',
    status: 'running',
    billing: 'free',
    receiptId: `rcpt_${id}`,
    callId: id,
    owner: 'gw-1',
    leaseUntil: Date.now() + 10_000,
    reservation: {
      callId: id,
      principalId: 'did:web:x:tenant:a',
      billing: 'free',
      reservedMicroUSD: 0,
      reservedTokens: 10,
      day: '2026-01-01',
      rates: { inputPerMTok: 900000, cachedInputPerMTok: 225000, outputPerMTok: 4500000 },
      freeUnit: 'requests',
      rungCounted: false,
      expiresAt: Date.now() + 60_000,
    },
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    ...patch,
  };
}

function contract(name: string, make: () => Promise<JobStore>) {
  describe(`job store contract: ${name}`, () => {
    let s: JobStore;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.close());

    it('creates a job once; the same id attaches to the live one', async () => {
      const first = await s.createOrAttach(job('a'), RETAIN);
      expect(first.created).to.equal(true);
      const again = await s.createOrAttach(job('a', { owner: 'gw-2', callId: 'other' }), RETAIN);
      expect(again.created).to.equal(false);
      expect(again.job.owner).to.equal('gw-1');
      expect(again.job.callId).to.equal('a');
    });

    it('replaces a failed job with a new attempt', async () => {
      await s.createOrAttach(job('b'), RETAIN);
      await s.update('b', 'gw-1', { status: 'failed', error: { code: 'upstream-error', message: 'x' } }, RETAIN);
      const retry = await s.createOrAttach(job('b', { callId: 'b2' }), RETAIN);
      expect(retry.created).to.equal(true);
      expect((await s.get('b'))!.callId).to.equal('b2');
      expect((await s.get('b'))!.error).to.equal(undefined);
    });

    it('lets only the owner write, and nothing once terminal', async () => {
      await s.createOrAttach(job('c'), RETAIN);
      expect(await s.update('c', 'gw-2', { status: 'succeeded' }, RETAIN)).to.equal(null);
      const done = await s.update('c', 'gw-1', { status: 'succeeded', result: { completion: {}, content: 'hi', toolCalls: [], finishReason: 'stop' } }, RETAIN);
      expect(done!.status).to.equal('succeeded');
      expect(await s.update('c', 'gw-1', { status: 'failed' }, RETAIN)).to.equal(null);
      const read = await s.get('c');
      expect(read!.status).to.equal('succeeded');
      expect(read!.result!.toolCalls).to.deep.equal([]);
    });

    it('sweeps jobs whose lease ended, once, and leaves renewed and finished ones', async () => {
      const now = Date.now();
      await s.createOrAttach(job('d1', { leaseUntil: now - 1 }), RETAIN);
      await s.createOrAttach(job('d2', { leaseUntil: now - 1 }), RETAIN);
      await s.createOrAttach(job('d3', { leaseUntil: now - 1 }), RETAIN);
      await s.renew('gw-1', ['d2'], now + 60_000);
      await s.update('d3', 'gw-1', { status: 'succeeded' }, RETAIN);
      const swept = await s.sweep(now, 100, RETAIN, 60_000);
      expect(swept.map((j) => j.jobId)).to.deep.equal(['d1']);
      expect(swept[0]!.reservation.reservedTokens).to.equal(10);
      expect((await s.get('d1'))!).to.deep.include({ status: 'failed', error: { code: 'job-interrupted', message: swept[0]!.error!.message } });
      expect(await s.sweep(now, 100, RETAIN, 60_000)).to.deep.equal([]);
      // The runner that lost its lease cannot write over the sweeper's verdict.
      expect(await s.update('d1', 'gw-1', { status: 'succeeded' }, RETAIN)).to.equal(null);
    });

    it('returns a swept job again, after the retry delay, until its settlement is acknowledged; then never', async () => {
      const now = Date.now();
      await s.createOrAttach(job('e1', { leaseUntil: now - 1 }), RETAIN);
      const [first] = await s.sweep(now, 100, RETAIN, 1);
      expect(first).to.deep.include({ jobId: 'e1', status: 'failed' });
      // Its settlement was lost (the store went down between the two writes): a later sweep offers it again,
      // unchanged.
      const again = await until(async () => (await s.sweep(Date.now() + 5, 100, RETAIN, 1)).find((j) => j.jobId === 'e1') ?? null, {
        what: 'the unsettled swept job to be offered again',
      });
      expect(again).to.deep.equal(first);
      await s.sweepSettled(again);
      await new Promise((r) => setTimeout(r, 5));
      expect(await s.sweep(Date.now() + 5, 100, RETAIN, 1)).to.deep.equal([]);
    });

    it('keeps a swept job whose settlement is pending from being replaced by a resend; once settled, a resend runs', async () => {
      const now = Date.now();
      await s.createOrAttach(job('e2', { leaseUntil: now - 1 }), RETAIN);
      const [swept] = await s.sweep(now, 100, RETAIN, 60_000);
      const early = await s.createOrAttach(job('e2', { leaseUntil: Date.now() + 200 }), RETAIN);
      expect(early.created).to.equal(false);
      expect(early.job).to.deep.include({ status: 'failed', updatedAt: swept!.updatedAt });
      await s.sweepSettled(swept!);
      expect((await s.createOrAttach(job('e2', { leaseUntil: Date.now() + 200 }), RETAIN)).created).to.equal(true);
      await s.sweepSettled(swept!); // a late acknowledgement of the old attempt leaves the new one's lease
      const resent = await until(async () => (await s.sweep(Date.now() + 300, 100, RETAIN, 60_000)).find((j) => j.jobId === 'e2') ?? null, {
        what: 'the resent attempt swept once its own lease lapsed',
      });
      expect(resent.status).to.equal('failed');
    });

    it("marks the owner's queued jobs running, and nothing else", async () => {
      await s.createOrAttach(job('m1', { status: 'queued' }), RETAIN);
      await s.createOrAttach(job('m2', { status: 'queued', owner: 'gw-2' }), RETAIN);
      await s.createOrAttach(job('m3', { status: 'queued' }), RETAIN);
      await s.update('m3', 'gw-1', { status: 'succeeded' }, RETAIN);
      await s.markRunning('gw-1', ['m1', 'm2', 'm3', 'unknown'], '2030-01-01T00:00:00.000Z');
      expect(await s.get('m1')).to.include({ status: 'running', updatedAt: '2030-01-01T00:00:00.000Z' });
      expect(await s.get('m2')).to.include({ status: 'queued' });
      expect(await s.get('m3')).to.include({ status: 'succeeded' });
      expect(await s.get('unknown')).to.equal(null);
    });

    it('binds an idempotency key once per principal', async () => {
      expect(await s.bindIdempotencyKey('p1', 'k', { bodyHash: 'h1', jobId: 'j1' }, RETAIN)).to.equal(null);
      expect(await s.bindIdempotencyKey('p1', 'k', { bodyHash: 'h2', jobId: 'j2' }, RETAIN)).to.deep.equal({ bodyHash: 'h1', jobId: 'j1' });
      expect(await s.bindIdempotencyKey('p2', 'k', { bodyHash: 'h2', jobId: 'j2' }, RETAIN)).to.equal(null);
    });

    it('reads an idempotency binding without binding anything', async () => {
      expect(await s.idempotencyBinding('p3', 'k')).to.equal(null);
      expect(await s.idempotencyBinding('p3', 'k')).to.equal(null);
      expect(await s.bindIdempotencyKey('p3', 'k', { bodyHash: 'h3', jobId: 'j3' }, RETAIN)).to.equal(null);
      expect(await s.idempotencyBinding('p3', 'k')).to.deep.equal({ bodyHash: 'h3', jobId: 'j3' });
      expect(await s.idempotencyBinding('p4', 'k')).to.equal(null);
    });

    it('returns null for an unknown job', async () => {
      expect(await s.get('nope')).to.equal(null);
    });
  });
}

contract('memory', async () => new MemoryJobStore());

onRedis('job store on redis', (connect) =>
  contract('redis', async () => {
    const store = await connect();
    return Object.assign(new RedisJobStore(store), { close: () => store.close() });
  }),
);
