/**
 * The job stages of the pipeline.
 *
 *   jobKey   the request's deterministic job id (principal + canonical request); for a token seen
 *            before, computed by the look-ahead stage, whose job lookup rode with the token's
 *   attach   a live job with that id exists: the call is `attached` to it (src/call/call.ts), and the
 *            composition (src/app/api.ts) skips admission and metering for it — no second upstream call,
 *            no second charge
 *   run      hand the admitted, metered, guarded call to the job engine — its job was created in the
 *            reservation's write — from here its runner owns the reservation and the receipt
 *   wait     chat only: wait up to the synchronous wait (14 minutes by default); past it 504
 *            `inference-timeout` while the job goes on
 */
import type { Context, Next } from 'koa';
import { GatewayError, isErrorCode } from '../errors.js';
import { TERMINAL, type JobRecord } from '../jobs/job.js';
import type { JobEngine, JobRun } from '../jobs/engine.js';
import type { JobStore } from '../jobs/store.js';
import { executeCall, type ExecuteDeps } from '../jobs/execute.js';
import type { Meter } from '../metering/meter.js';
import type { Call } from '../call/call.js';
import { callJobId, isLive } from '../call/job.js';

export function jobKey() {
  // Not async: no I/O here.
  return function jobKey(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const pid = call.identity!.principal.id;
    call.jobId = call.ahead?.principalId === pid ? call.ahead.jobId : callJobId(call, pid);
    return next();
  };
}

export function attach(jobs: JobStore) {
  return async function attach(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const existing = call.ahead?.jobId === call.jobId ? await call.ahead!.job : await jobs.get(call.jobId!);
    if (isLive(existing)) call.state = { at: 'attached', job: existing };
    await next();
  };
}

export function run(deps: ExecuteDeps & { meter: Meter }, engine: JobEngine) {
  // Not async: handing a created job to the engine does no I/O; only the lost race waits (for the release).
  return function run(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const state = call.state;
    if (state.at !== 'reserved' || (state.job === null && state.rival === null)) throw new GatewayError('internal-error');
    if (state.job) {
      // Created in the reservation's write (meter stage): run it.
      const settings = call.runtime.jobs;
      const runner: JobRun = (signal, ending) => executeCall(deps, call, signal, settings.upstreamRetries, ending);
      engine.runCreated(state.job, runner);
      call.state = { at: 'handed-over', job: state.job };
      return next();
    }
    // An identical request won the race to create the job: attach to it and give back what we reserved.
    const rival = state.rival!;
    return deps.meter.release(call.reservation!).then(() => {
      call.state = { at: 'handed-over', job: rival };
      return next();
    });
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
      throw new GatewayError(
        'inference-timeout',
        `the answer was not ready within the synchronous wait; job ${job.jobId} continues — resend the identical request to re-attach, or poll GET /v1/research/job?jobId=${job.jobId}`,
      );
    }
    if (job.status !== 'succeeded') throw jobError(job);
    call.state = { at: 'answered', job };
    await next();
  };
}
