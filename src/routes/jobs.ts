/**
 * The job API. POST /v1/research/jobs takes the strict body {model, task, scopeId?, max_tokens, messages}
 * with an `idempotency-key` header (a UUID v4), runs the same admission as the chat path with the named
 * scope (none needed on a blue-team model; src/openai/request.ts), and answers 202 with the queued job. GET /v1/research/job?jobId= answers 202 with `pollAfterMs`
 * while the job is queued or running, 200 once it has ended (with content, toolCalls and finishReason, or
 * its error). A principal sees only its own jobs: another's id is answered as not found.
 */
import type { Context, Next } from 'koa';
import { GatewayError } from '../errors.js';
import { bodyHash, jobObject, TERMINAL } from '../jobs/job.js';
import type { JobStore } from '../jobs/store.js';
import { PAT_OR_SESSION, resolveCaller, type CallerDeps } from '../auth/caller.js';
import type { RuntimeHolder } from '../config/reloader.js';
import { callJob, type Call } from '../call/call.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks the header before the body is read: a request without one cannot be made idempotent. */
export function requireIdempotencyKey() {
  return async function requireIdempotencyKey(ctx: Context, next: Next): Promise<void> {
    const key = ctx.get('idempotency-key');
    if (!key) throw new GatewayError('idempotency-key-required');
    if (!UUID_V4.test(key)) throw new GatewayError('invalid-idempotency-key');
    await next();
  };
}

/**
 * Before admission: a key already bound to another body is refused (409), whatever this body asks. Nothing
 * is bound here — a request refused by validation or admission saves no idempotent result (Stripe's rule),
 * so the corrected body may be sent again under the same key.
 */
export function checkIdempotencyKey(jobs: JobStore) {
  return async function checkIdempotencyKey(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const bound = await jobs.idempotencyBinding(call.identity!.principal.id, ctx.get('idempotency-key').toLowerCase());
    if (bound && bound.bodyHash !== bodyHash(call.body)) throw new GatewayError('idempotency-key-reused');
    await next();
  };
}

/**
 * Once the request is admitted (or re-attached to its live job): binds the key to this body and job. Two
 * different bodies racing under one key both pass the check; the second to bind is refused here, and its
 * reservation is released by the meter stage like any refusal before the hand-over.
 */
export function bindIdempotencyKey(jobs: JobStore) {
  return async function bindIdempotencyKey(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const entry = { bodyHash: bodyHash(call.body), jobId: call.jobId! };
    const bound = await jobs.bindIdempotencyKey(call.identity!.principal.id, ctx.get('idempotency-key').toLowerCase(), entry, call.runtime.jobs.retentionMs);
    if (bound && bound.bodyHash !== entry.bodyHash) throw new GatewayError('idempotency-key-reused');
    await next();
  };
}

/** The 202 answer of POST /v1/research/jobs. */
export function queued() {
  return async function queued(ctx: Context): Promise<void> {
    const call = ctx.state.call as Call;
    ctx.status = 202;
    ctx.body = jobObject(callJob(call)!, call.runtime.jobs.pollAfterMs);
  };
}

export function getJob(deps: CallerDeps, jobs: JobStore, holder: RuntimeHolder) {
  return async function getJob(ctx: Context): Promise<void> {
    const identity = await resolveCaller(ctx, deps, PAT_OR_SESSION);
    const jobId = ctx.query['jobId'];
    if (typeof jobId !== 'string' || !UUID.test(jobId)) throw new GatewayError('invalid-job-id');
    const job = await jobs.get(jobId.toLowerCase());
    if (!job || job.principalId !== identity.principal.id) throw new GatewayError('job-not-found');
    ctx.status = TERMINAL.has(job.status) ? 200 : 202;
    ctx.body = jobObject(job, holder.current.jobs.pollAfterMs);
  };
}
