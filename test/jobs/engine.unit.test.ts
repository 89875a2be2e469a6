/**
 * The job engine, on the memory store, the memory job store and the memory meter (nothing but Node): what
 * a maintainer must keep true when changing it. A job is claimed, opened in its reservation and run with
 * `runCreated`, and ends in its settlement's write (balance and receipt); `wait` returns the finished job or
 * gives up at its deadline with the job going on, here or on another engine sharing the store; an identical
 * request attaches to the live job; a runner that lost its lease cannot overwrite what a sweep decided; a
 * job whose runner died is failed by another engine's sweep, its reservation released and an interrupted
 * receipt written; `start` renews and sweeps, `close` stops every timer and cancels what still runs.
 *
 * Time: each engine reads an injected clock (`now`) that the tests move by hand, so leases end without
 * waiting for them. What does wait (a runner held by a gate, a timer the engine sets itself) is awaited on
 * its promise or polled in small steps; nothing asserts how long anything took.
 */
import { expect } from 'chai';
import { JobEngine, type JobRun, type JobSettings } from '../../src/jobs/engine.js';
import { MemoryJobStore } from '../../src/jobs/memory-store.js';
import type { JobRecord, JobResult } from '../../src/jobs/job.js';
import { MemoryMeter } from '../../src/metering/memory-meter.js';
import { provisionalReservation, type Reservation, type ReserveRequest, type Settlement } from '../../src/metering/meter.js';
import type { Usage } from '../../src/metering/price.js';
import { MemoryStore } from '../../src/store/memory.js';
import type { Receipt } from '../../src/store/store.js';
import { GatewayError } from '../../src/errors.js';
import { StoreUnavailable } from '../../src/store/errors.js';
import { silentLogger } from '../../src/log.js';
import type { CreateOutcome } from '../../src/jobs/store.js';

const SETTINGS: JobSettings = { leaseMs: 15_000, sweepEveryMs: 60_000, retentionMs: 60_000, pollAfterMs: 20, maxRunMs: 60_000, upstreamRetries: 0 };
const PRINCIPAL = 'did:web:x:tenant:a';
/** 10 input tokens at 0.9 USD/MTok and 20 output tokens at 4.5 USD/MTok: 9 + 90 micro-USD. */
const USAGE: Usage = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, cached_tokens: 0 };
const CHARGE = 99;
/** The worst case held for a paid call: 10 input tokens + max_tokens 90 at the output rate: 9 + 405. */
const HELD = 414;
const GRANTED = 1_000_000;

let n = 0;
/** Every engine a test makes, closed after it (a timer left running would keep the run from ending). */
const engines: JobEngine[] = [];

afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

/** One store, job store and meter, shared by every engine `engine()` makes; one clock they all read. */
function world() {
  const store = new MemoryStore();
  const jobs = new MemoryJobStore();
  const meter = new MemoryMeter(store, { jobs });
  const clock = { t: Date.now() };
  /** Settlements that fail as an outage would (StoreUnavailable), before any write: the next n. */
  const outage = { settlements: 0 };
  const settled: typeof meter = Object.create(meter, {
    settle: {
      value: (...a: Parameters<typeof meter.settle>) =>
        outage.settlements > 0 && outage.settlements-- > 0
          ? Promise.reject(new StoreUnavailable('redis meter.settle failed: The client is offline'))
          : meter.settle(...a),
    },
  });
  const engine = (over: Partial<JobSettings> = {}) => {
    const e = new JobEngine(
      jobs,
      settled,
      silentLogger,
      () => ({ ...SETTINGS, ...over }),
      () => clock.t,
    );
    engines.push(e);
    return e;
  };
  return { store, jobs, meter, clock, engine, outage };
}

/** A call's reservation request; `paid` leaves no free allowance, so the call holds credits. */
function request(opts: { paid?: boolean } = {}): ReserveRequest {
  return {
    callId: `call-${++n}`,
    principalId: PRINCIPAL,
    model: 'shared-general-a',
    task: 'code-review',
    estimatedTokens: 100,
    maxOutputTokens: 90,
    limits: { free: { perDay: opts.paid ? 0 : 10, unit: 'requests' }, rung: null },
    rates: { inputPerMTok: 900_000, cachedInputPerMTok: 225_000, outputPerMTok: 4_500_000 },
    ttlMs: 60_000,
  };
}

function draft(req: ReserveRequest, jobId = `job-${req.callId}`): JobRecord {
  const at = new Date().toISOString();
  return {
    jobId,
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

type World = ReturnType<typeof world>;

/** Claims a job on `engine` and opens it in the call's reservation: what the meter stage does. */
async function open(w: World, engine: JobEngine, req: ReserveRequest, jobId?: string) {
  const claimed = engine.claim(draft(req, jobId));
  let outcome: CreateOutcome | undefined;
  const reservation = await w.meter.reserve(
    req,
    engine.opening(claimed, (o) => (outcome = o)),
  );
  const job: JobRecord = { ...claimed, billing: reservation.billing, reservation };
  return { job, reservation, outcome: outcome! };
}

function answer(s: Settlement): JobResult {
  return { completion: { chargedMicroUSD: s.chargedMicroUSD }, content: 'done', toolCalls: null, finishReason: 'stop' };
}

function answeredReceipt(req: ReserveRequest, s: Settlement): Receipt {
  return {
    id: `rcpt_${req.callId}`,
    callId: req.callId,
    principalId: req.principalId,
    createdAt: new Date().toISOString(),
    outcome: 'answered',
    billing: s.billing,
    chargedMicroUSD: s.chargedMicroUSD,
  };
}

/** A runner as executeCall is one: it settles the usage, with the job's end in the same write. */
function settling(w: World, req: ReserveRequest, reservation: Reservation, first?: Promise<unknown>): JobRun {
  return async (signal, ending) => {
    // Held until `first` settles, unless the job is stopped meanwhile (then it ends as the abort says).
    await Promise.race([first, new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }))]);
    let result: JobResult | undefined;
    const s = await w.meter.settle(
      reservation,
      { usage: USAGE, chargeable: true },
      (st) => answeredReceipt(req, st),
      (st) => ending.succeeded((result = answer(st))),
    );
    return result ?? answer(s);
  };
}

/** A runner that runs until the engine stops it, then fails as its signal says (and tells `stopped` why). */
function untilStopped(stopped: (reason: unknown) => void): JobRun {
  return (signal) =>
    new Promise<JobResult>((_resolve, reject) => {
      signal.addEventListener(
        'abort',
        () => {
          stopped(signal.reason);
          reject(signal.reason as Error);
        },
        { once: true },
      );
    });
}

/** A promise the test settles by hand: what holds a runner "in the upstream call". */
function gate<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

/** Polls in small steps until `check` holds: for what a timer of the engine does on its own. */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}

async function grant(w: World) {
  await w.meter.grant({ operationId: `grant-${++n}`, principalId: PRINCIPAL, kind: 'credits', microUSD: GRANTED, source: 'test' });
}

async function balance(w: World) {
  return (await w.meter.status(PRINCIPAL)).balances[0]!;
}

describe('job engine', () => {
  describe('creating and running a job', () => {
    it('runs a job created in its reservation and ends it in its settlement: result, charge and receipt in one write', async () => {
      const w = world();
      const engine = w.engine();
      await grant(w);
      const req = request({ paid: true });
      const { job, reservation, outcome } = await open(w, engine, req);
      expect(outcome).to.deep.equal({ created: true });
      expect(await w.jobs.get(job.jobId)).to.include({ status: 'queued', owner: engine.instanceId, billing: 'paid' });
      expect(await balance(w)).to.include({ reservedMicroUSD: HELD, availableMicroUSD: GRANTED - HELD });
      let inside: JobRecord | null = null;
      const run: JobRun = async (signal, ending) => {
        const result = await settling(w, req, reservation)(signal, ending);
        inside = await w.jobs.get(job.jobId); // ended by the settlement's write, before the runner returns
        return result;
      };
      engine.runCreated(job, run);
      const ended = await engine.wait(job.jobId, 5_000);
      expect(inside).to.include({ status: 'succeeded' }).and.nested.include({ 'result.content': 'done' });
      expect(ended).to.include({ status: 'succeeded', jobId: job.jobId }).and.nested.include({ 'result.completion.chargedMicroUSD': CHARGE });
      expect(await balance(w)).to.include({ spentMicroUSD: CHARGE, reservedMicroUSD: 0, availableMicroUSD: GRANTED - CHARGE });
      expect(await w.store.getReceipt(`rcpt_${req.callId}`)).to.include({ outcome: 'answered', billing: 'paid', chargedMicroUSD: CHARGE });
    });

    it('ends a job whose runner returns without settling by its own write: succeeded with the result returned', async () => {
      const w = world();
      const engine = w.engine();
      const req = request();
      const { job } = await open(w, engine, req);
      engine.runCreated(job, async () => ({ completion: {}, content: 'plain', toolCalls: null, finishReason: 'stop' }));
      expect(await engine.wait(job.jobId, 5_000))
        .to.include({ status: 'succeeded' })
        .and.nested.include({ 'result.content': 'plain' });
      expect(await w.jobs.get(job.jobId))
        .to.include({ status: 'succeeded' })
        .and.nested.include({ 'result.content': 'plain' });
    });

    it("fails a job whose runner throws a GatewayError with that error's code and message", async () => {
      const w = world();
      const engine = w.engine();
      const { job } = await open(w, engine, request());
      engine.runCreated(job, async () => {
        throw new GatewayError('upstream-unavailable', 'every origin of the route failed');
      });
      const ended = await engine.wait(job.jobId, 5_000);
      expect(ended)
        .to.include({ status: 'failed' })
        .and.nested.include({ 'error.code': 'upstream-unavailable', 'error.message': 'every origin of the route failed' });
      expect(await w.jobs.get(job.jobId)).to.nested.include({ 'error.code': 'upstream-unavailable' });
    });

    it('fails a job whose runner throws anything else as internal-error, without the thrown message', async () => {
      const w = world();
      const engine = w.engine();
      const { job } = await open(w, engine, request());
      engine.runCreated(job, async () => {
        throw new Error('secret sk-live-123 in a stack');
      });
      const ended = await engine.wait(job.jobId, 5_000);
      expect(ended).to.include({ status: 'failed' }).and.nested.include({ 'error.code': 'internal-error' });
      expect(JSON.stringify(await w.jobs.get(job.jobId))).not.to.contain('sk-live-123');
    });

    it('stops a job that runs longer than maxRunMs: its runner is aborted with job-expired and the job ends expired', async () => {
      const w = world();
      const engine = w.engine({ maxRunMs: 30 });
      const { job } = await open(w, engine, request());
      let reason: unknown;
      engine.runCreated(
        job,
        untilStopped((why) => (reason = why)),
      );
      const ended = await engine.wait(job.jobId, 5_000);
      expect(reason).to.be.instanceOf(GatewayError).and.include({ code: 'job-expired' });
      expect(ended).to.include({ status: 'expired' }).and.nested.include({ 'error.code': 'job-expired' });
      expect(await w.jobs.get(job.jobId)).to.include({ status: 'expired' });
    });

    it('attaches an identical request to the live job instead of creating a second, running or finished', async () => {
      const w = world();
      const engine = w.engine();
      const first = request();
      const held = gate();
      const { job, reservation } = await open(w, engine, first, 'job-same');
      engine.runCreated(job, settling(w, first, reservation, held.promise));

      const second = await open(w, engine, request(), 'job-same');
      expect(second.outcome.created).to.equal(false);
      expect(second.outcome).to.nested.include({ 'job.callId': first.callId, 'job.jobId': 'job-same' });
      expect(await w.jobs.get('job-same')).to.include({ callId: first.callId });

      held.resolve();
      expect(await engine.wait('job-same', 5_000)).to.include({ status: 'succeeded', callId: first.callId });
      const third = await open(w, engine, request(), 'job-same');
      expect(third.outcome).to.nested.include({ created: false, 'job.status': 'succeeded', 'job.result.content': 'done' });
    });

    it('replaces a failed job with the identical request sent again: a new attempt that runs', async () => {
      const w = world();
      const engine = w.engine();
      const { job } = await open(w, engine, request(), 'job-again');
      engine.runCreated(job, async () => {
        throw new GatewayError('upstream-unavailable');
      });
      expect(await engine.wait('job-again', 5_000)).to.include({ status: 'failed' });

      const req = request();
      const retry = await open(w, engine, req, 'job-again');
      expect(retry.outcome).to.deep.equal({ created: true });
      engine.runCreated(retry.job, settling(w, req, retry.reservation));
      expect(await engine.wait('job-again', 5_000)).to.include({ status: 'succeeded', callId: req.callId });
    });

    it("abandons a created job whose call failed before the hand-over: failed with the call's error", async () => {
      const w = world();
      const engine = w.engine();
      const { job } = await open(w, engine, request());
      await engine.abandon(job, new GatewayError('store-unavailable'));
      expect(await w.jobs.get(job.jobId))
        .to.include({ status: 'failed' })
        .and.nested.include({ 'error.code': 'store-unavailable' });
    });
  });

  describe('wait', () => {
    it('gives up at its deadline with the job as it then is, without failing it: the job goes on to its end', async () => {
      const w = world();
      const engine = w.engine();
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, engine, req);
      engine.runCreated(job, settling(w, req, reservation, held.promise));
      const early = await engine.wait(job.jobId, 10);
      expect(early).to.include({ jobId: job.jobId, status: 'queued' });
      held.resolve();
      expect(await engine.wait(job.jobId, 5_000)).to.include({ status: 'succeeded' });
    });

    it('stops waiting (null) when the waiter goes away; the job runs on and is settled once', async () => {
      const w = world();
      const engine = w.engine();
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, engine, req);
      engine.runCreated(job, settling(w, req, reservation, held.promise));
      const gone = new AbortController();
      const waiting = engine.wait(job.jobId, 5_000, gone.signal);
      gone.abort();
      expect(await waiting).to.equal(null);
      held.resolve();
      expect(await engine.wait(job.jobId, 5_000)).to.include({ status: 'succeeded' });
      expect(await w.store.getReceipt(`rcpt_${req.callId}`)).to.include({ outcome: 'answered' });
    });

    it('answers null for a job nobody made', async () => {
      const w = world();
      expect(await w.engine().wait('job-none', 50)).to.equal(null);
    });
  });

  describe('two engines sharing one store', () => {
    it("waits for the other engine's job to end and returns it with its result", async () => {
      const w = world();
      const [a, b] = [w.engine(), w.engine()];
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, a, req);
      a.runCreated(job, settling(w, req, reservation, held.promise));
      const waiting = b.wait(job.jobId, 5_000);
      held.resolve();
      expect(await waiting)
        .to.include({ status: 'succeeded', owner: a.instanceId })
        .and.nested.include({ 'result.content': 'done' });
    });

    it("gives up at its deadline on the other engine's job without failing it", async () => {
      const w = world();
      const [a, b] = [w.engine(), w.engine()];
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, a, req);
      a.runCreated(job, settling(w, req, reservation, held.promise));
      expect(await b.wait(job.jobId, 30)).to.include({ status: 'queued' });
      held.resolve();
      expect(await b.wait(job.jobId, 5_000)).to.include({ status: 'succeeded' });
    });

    it("stops waiting (null) on the other engine's job when the waiter goes away between two polls", async () => {
      const w = world();
      const [a, b] = [w.engine(), w.engine({ pollAfterMs: 60_000 })];
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, a, req);
      a.runCreated(job, settling(w, req, reservation, held.promise));
      // The waiter goes away between two polls of the store (after its second), asleep until the next.
      const get = w.jobs.get.bind(w.jobs);
      const polled = gate();
      let polls = 0;
      w.jobs.get = async (jobId) => {
        const found = await get(jobId);
        if (++polls === 2) polled.resolve();
        return found;
      };
      const gone = new AbortController();
      const waiting = b.wait(job.jobId, 60_000, gone.signal);
      await polled.promise;
      gone.abort();
      expect(await waiting).to.equal(null);
      held.resolve();
      expect(await a.wait(job.jobId, 5_000)).to.include({ status: 'succeeded' });
    });

    it("fails a job whose runner died (lease run out) in another engine's sweep: job-interrupted, reservation released, interrupted receipt", async () => {
      const w = world();
      const [dead, b] = [w.engine(), w.engine()];
      await grant(w);
      const req = request({ paid: true });
      const { job } = await open(w, dead, req); // its instance dies before it ends: nothing renews its lease
      expect(await balance(w)).to.include({ reservedMicroUSD: HELD });

      expect(await b.sweep()).to.equal(0); // the lease still holds
      w.clock.t += SETTINGS.leaseMs + 1;
      expect(await b.sweep()).to.equal(1);

      expect(await b.wait(job.jobId, 5_000))
        .to.include({ status: 'failed' })
        .and.nested.include({ 'error.code': 'job-interrupted' });
      expect(await balance(w)).to.include({ reservedMicroUSD: 0, spentMicroUSD: 0, availableMicroUSD: GRANTED });
      expect(await w.store.getReceipt(job.receiptId)).to.deep.include({
        callId: req.callId,
        outcome: 'failed',
        error: { code: 'job-interrupted' },
        billing: 'paid',
        chargedMicroUSD: 0,
      });
      expect(await b.sweep()).to.equal(0); // failed once
    });

    it("makes a swept job's settlement again when the store failed it: the reservation is released and the receipt written, once", async () => {
      const w = world();
      const [dead, b] = [w.engine(), w.engine()];
      await grant(w);
      const req = request({ paid: true });
      const { job } = await open(w, dead, req);
      w.clock.t += SETTINGS.leaseMs + 1;
      w.outage.settlements = 1; // the store goes down between the job's failure and its settlement
      expect(await b.sweep()).to.equal(1);
      expect(await w.jobs.get(job.jobId)).to.nested.include({ 'error.code': 'job-interrupted' });
      expect(await balance(w)).to.include({ reservedMicroUSD: HELD });
      expect(await w.store.getReceipt(job.receiptId)).to.equal(null);

      expect(await b.sweep()).to.equal(0); // not before the retry delay (one lease)
      w.clock.t += SETTINGS.leaseMs + 1;
      expect(await b.sweep()).to.equal(1);
      expect(await balance(w)).to.include({ reservedMicroUSD: 0, spentMicroUSD: 0, availableMicroUSD: GRANTED });
      expect(await w.store.getReceipt(job.receiptId)).to.deep.include({ outcome: 'failed', error: { code: 'job-interrupted' }, chargedMicroUSD: 0 });
      w.clock.t += SETTINGS.leaseMs + 1;
      expect(await b.sweep()).to.equal(0); // settled, acknowledged: never again
    });

    it('keeps what the sweep decided when the runner that lost its lease settles afterwards: no overwrite, no charge', async () => {
      const w = world();
      const [a, b] = [w.engine(), w.engine()];
      await grant(w);
      const req = request({ paid: true });
      const held = gate();
      const { job, reservation } = await open(w, a, req);
      a.runCreated(job, settling(w, req, reservation, held.promise));
      w.clock.t += SETTINGS.leaseMs + 1; // a's lease lapses (its renewals stalled)
      expect(await b.sweep()).to.equal(1);

      held.resolve(); // the upstream answers after all; a settles with the job's end in the write
      const seen = await a.wait(job.jobId, 5_000);
      expect(seen).to.include({ status: 'failed' }).and.nested.include({ 'error.code': 'job-interrupted' });
      expect(seen).not.to.have.property('result');
      expect(await w.jobs.get(job.jobId)).to.include({ status: 'failed' });
      expect(await w.store.getReceipt(job.receiptId)).to.include({ outcome: 'failed', chargedMicroUSD: 0 });
      expect(await balance(w)).to.include({ spentMicroUSD: 0, reservedMicroUSD: 0 });
    });

    it('keeps what the sweep decided when the runner that lost its lease ends the job by its own write', async () => {
      const w = world();
      const [a, b] = [w.engine(), w.engine()];
      const held = gate();
      const { job } = await open(w, a, request());
      a.runCreated(job, async () => {
        await held.promise;
        return { completion: {}, content: 'late', toolCalls: null, finishReason: 'stop' };
      });
      w.clock.t += SETTINGS.leaseMs + 1;
      expect(await b.sweep()).to.equal(1);
      held.resolve();
      expect(await a.wait(job.jobId, 5_000))
        .to.include({ status: 'failed' })
        .and.nested.include({ 'error.code': 'job-interrupted' });
      expect(await w.jobs.get(job.jobId)).not.to.have.property('result');
    });

    it('changes neither the receipt nor the charge of a call settled before its runner died', async () => {
      const w = world();
      const [dead, b] = [w.engine(), w.engine()];
      await grant(w);
      const req = request({ paid: true });
      const { job, reservation } = await open(w, dead, req);
      // Settled, then the instance died before the job's end was written.
      await w.meter.settle(reservation, { usage: USAGE, chargeable: true }, (s) => answeredReceipt(req, s));
      w.clock.t += SETTINGS.leaseMs + 1;
      expect(await b.sweep()).to.equal(1);
      expect(await w.jobs.get(job.jobId)).to.nested.include({ 'error.code': 'job-interrupted' });
      expect(await w.store.getReceipt(job.receiptId)).to.include({ outcome: 'answered', chargedMicroUSD: CHARGE });
      expect(await balance(w)).to.include({ spentMicroUSD: CHARGE, reservedMicroUSD: 0 });
    });
  });

  describe('timers: start, idle, close', () => {
    it("marks a running job running and renews its lease, so another engine's sweep leaves it alone", async () => {
      const w = world();
      const a = w.engine({ leaseMs: 150 }); // marks and renewals every 50 ms
      const b = w.engine({ leaseMs: 150 });
      a.start();
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, a, req);
      const t0 = w.clock.t;
      a.runCreated(job, settling(w, req, reservation, held.promise));
      w.clock.t = t0 + 10_000; // far past the lease claimed at t0
      await until(async () => (await w.jobs.get(job.jobId))?.leaseUntil === t0 + 10_150);
      expect(await w.jobs.get(job.jobId)).to.include({ status: 'running', owner: a.instanceId });
      expect(await b.sweep()).to.equal(0);
      held.resolve();
      expect(await a.wait(job.jobId, 5_000)).to.include({ status: 'succeeded' });
    });

    it('sweeps on its own once started: a dead runner is failed with no call to sweep()', async () => {
      const w = world();
      const dead = w.engine();
      const b = w.engine({ sweepEveryMs: 20 });
      b.start();
      const { job } = await open(w, dead, request());
      w.clock.t += SETTINGS.leaseMs + 1;
      expect(await b.wait(job.jobId, 5_000))
        .to.include({ status: 'failed' })
        .and.nested.include({ 'error.code': 'job-interrupted' });
    });

    it('idle() is true once the jobs here have ended, and false at its deadline while one runs (which goes on)', async () => {
      const w = world();
      const engine = w.engine();
      expect(await engine.idle(10)).to.equal(true);
      const req = request();
      const held = gate();
      const { job, reservation } = await open(w, engine, req);
      engine.runCreated(job, settling(w, req, reservation, held.promise));
      expect(await engine.idle(10)).to.equal(false);
      const idle = engine.idle(5_000);
      held.resolve();
      expect(await idle).to.equal(true);
      expect(await w.jobs.get(job.jobId)).to.include({ status: 'succeeded' });
    });

    it('close() cancels what still runs here: the runner is aborted, the job fails job-interrupted, close waits for it', async () => {
      const w = world();
      const engine = w.engine();
      const { job } = await open(w, engine, request());
      let reason: unknown;
      engine.runCreated(
        job,
        untilStopped((why) => (reason = why)),
      );
      await engine.close();
      expect(reason).to.be.instanceOf(GatewayError).and.include({ code: 'job-interrupted' });
      expect(await w.jobs.get(job.jobId))
        .to.include({ status: 'failed' })
        .and.nested.include({ 'error.code': 'job-interrupted' });
      expect(await engine.idle(10)).to.equal(true);
    });

    it('close() clears every timer start() set, so the process can exit', async () => {
      const w = world();
      const engine = w.engine();
      const made: unknown[] = [];
      const cleared = new Set<unknown>();
      const { setInterval: realSet, clearInterval: realClear } = globalThis;
      globalThis.setInterval = (...args: Parameters<typeof realSet>) => {
        const t = realSet(...args);
        made.push(t);
        return t;
      };
      globalThis.clearInterval = (t: Parameters<typeof realClear>[0]) => {
        cleared.add(t);
        realClear(t);
      };
      try {
        engine.start();
        expect(made).to.have.length.greaterThan(0);
        await engine.close();
      } finally {
        globalThis.setInterval = realSet;
        globalThis.clearInterval = realClear;
      }
      for (const t of made) expect(cleared.has(t), 'an interval start() set is still running after close()').to.equal(true);
    });
  });
});
