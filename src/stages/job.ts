/**
 * The job stages of the pipeline.
 *
 *   jobKey   the request's deterministic job id (principal + canonical request); for a token seen
 *            before, computed by `lookAhead` during identify, whose job lookup rides with the token's
 *   attach   a live job with that id exists: skip admission and metering, go straight to `reattached`
 *            (wait and respond for chat; the job object for the jobs API) — no second upstream call, no
 *            second charge
 *   run      hand the admitted, metered, guarded call to the job engine — its job was created in the
 *            reservation's write, or is created now — from here its runner owns the reservation and the receipt
 *   wait     chat only: wait up to the synchronous wait (14 minutes by default); past it 504
 *            `inference-timeout` while the job goes on
 */
import type { Context, Middleware, Next } from 'koa';
import { GatewayError, isErrorCode } from '../errors.js';
import { jobIdFor, TERMINAL, type JobRecord } from '../jobs/job.js';
import type { JobEngine, JobRun } from '../jobs/engine.js';
import type { JobStore } from '../jobs/store.js';
import { executeCall } from '../jobs/execute.js';
import { newReceiptId } from '../receipts/receipt.js';
import type { Deps } from '../app/deps.js';
import type { Call } from './call.js';
import type { Reservation } from '../metering/meter.js';

function callJobId(call: Call, principalId: string): string {
  const { request, maxTokens } = call.valid!;
  return jobIdFor(principalId, {
    model: request.model,
    task: call.task!,
    scopeId: call.scopeId,
    max_tokens: maxTokens,
    messages: request.messages,
    tools: request.tools,
    tool_choice: request.tool_choice,
    seed: request.seed ?? null,
  });
}

/**
 * The job lookup of `attach`, started early: by the identify stage, alongside the token lookup, when the
 * token's principal is already known (so both go to the store in one round trip).
 */
export function lookAhead(jobs: JobStore) {
  return (call: Call, principalId: string): void => {
    const jobId = callJobId(call, principalId);
    const job = jobs.get(jobId);
    job.catch(() => undefined); // awaited by `attach`, or dropped when the call ends before it
    call.lookahead = { principalId, jobId, job };
  };
}

export function jobKey() {
  // Not async: no I/O here.
  return function jobKey(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const pid = call.identity!.principal.id;
    call.jobId = call.lookahead?.principalId === pid ? call.lookahead.jobId : callJobId(call, pid);
    return next();
  };
}

export const isLive = (job: JobRecord | null): job is JobRecord => job !== null && job.status !== 'failed' && job.status !== 'expired';

export function attach(jobs: JobStore, reattached: Middleware) {
  return async function attach(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const existing = call.lookahead?.jobId === call.jobId ? await call.lookahead!.job : await jobs.get(call.jobId!);
    if (isLive(existing)) {
      call.job = existing;
      call.handedOver = true;
      return reattached(ctx, next) as Promise<void>;
    }
    await next();
  };
}

/** The call's job as it is created: queued, not yet owned (the engine claims it). */
export function jobRecord(call: Call, origin: JobRecord['origin'], reservation: Reservation): JobRecord {
  const now = new Date().toISOString();
  return {
    jobId: call.jobId!,
    principalId: call.identity!.principal.id,
    model: call.model!.id,
    task: call.task!,
    scopeId: call.scopeId,
    origin,
    status: 'queued',
    billing: reservation.billing,
    receiptId: newReceiptId(call.id),
    callId: call.id,
    owner: '',
    leaseUntil: 0,
    reservation,
    createdAt: now,
    updatedAt: now,
  };
}

export function run(deps: Deps, engine: JobEngine, origin: JobRecord['origin']) {
  return async function run(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const settings = call.runtime.jobs;
    const runner: JobRun = (signal, ending) => executeCall(deps, call, signal, settings.upstreamRetries, ending);
    let created: boolean;
    let stored: JobRecord;
    if (call.created && 'attachTo' in call.created) {
      created = false;
      stored = call.created.attachTo;
    } else if (call.created) {
      // Created in the reservation's write (meter stage): run it.
      engine.runCreated(call.created, runner);
      created = true;
      stored = call.created;
    } else {
      ({ created, job: stored } = await engine.submit(jobRecord(call, origin, call.reservation!), runner));
    }
    if (!created) {
      // An identical request won the race to create the job: attach to it and give back what we reserved.
      await deps.meter.release(call.reservation!);
    }
    call.handedOver = true;
    call.job = stored;
    await next();
  };
}

/** A job that ended without an answer answers as its error. */
export function jobError(job: JobRecord): GatewayError {
  const code = job.error?.code ?? 'internal-error';
  return isErrorCode(code) ? new GatewayError(code, job.error?.message) : new GatewayError('internal-error');
}

export function wait(engine: JobEngine) {
  return async function wait(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const job = await engine.wait(call.jobId!, call.runtime.gateway.timeouts.syncWaitMs, call.abort.signal);
    if (call.abort.signal.aborted) return; // the client is gone; nobody to answer
    if (!job) throw new GatewayError('job-not-found');
    if (!TERMINAL.has(job.status)) {
      throw new GatewayError('inference-timeout', `the answer was not ready within the synchronous wait; job ${job.jobId} continues — resend the identical request to re-attach, or poll GET /v1/research/job?jobId=${job.jobId}`);
    }
    if (job.status !== 'succeeded') throw jobError(job);
    call.job = job;
    await next();
  };
}
