/**
 * The call: what one chat or job request carries from the moment it is opened to its answer — the domain
 * object the pipeline's stages (src/stages, which only adapt HTTP to it), the job runner (src/jobs), the
 * meter requests and the receipt are built from. Each stage reads what earlier stages wrote and adds its
 * own part; nothing else travels between stages.
 *
 * Where the call stands with its job and its money is one field, `state`:
 *
 *   admitting    no job and no reservation yet (identify, validate, admission)
 *   attached     an identical request's live job was found before admission: nothing to admit, pay or run;
 *                the call answers from that job
 *   reserved     the meter holds the worst case; `job` is the job created in the reservation's own write
 *                (null when the guardrails will refuse the call), or `rival` the live job of an identical
 *                request that the write found instead
 *   handed-over  a job owns the reservation and the receipt: the HTTP side no longer ends the call
 *   answered     the job the call waited for has finished with an answer
 */
import type { ModelRuntime, Runtime } from '../config/compile.js';
import type { Decision } from '../policy/engine.js';
import type { ScanResult } from '../guard/index.js';
import type { Caller } from '../auth/caller.js';
import type { Reservation, Settlement } from '../metering/meter.js';
import type { ValidCall } from '../openai/request.js';
import type { UpstreamAnswer } from '../openai/answer.js';
import type { JobRecord } from '../jobs/job.js';
import type { Verdict } from '../ratelimit/limiter.js';
import type { DecisionRide } from '../decisions/store.js';

export type CallState =
  | { at: 'admitting' }
  | { at: 'attached'; job: JobRecord }
  | { at: 'reserved'; job: JobRecord | null; rival: JobRecord | null }
  | { at: 'handed-over'; job: JobRecord }
  | { at: 'answered'; job: JobRecord };

/**
 * Lookups started before identify for a token seen before (src/stages/look-ahead.ts), so they go to the
 * store in the same round trip as the token's own: the job of an identical request and the principal's
 * rate-limit hit. Read by the stages that need them, and only when identify confirms the principal.
 */
export interface LookAhead {
  principalId: string;
  jobId: string;
  job: Promise<JobRecord | null>;
  /** The principal's rate-limit hit, when a per-principal limit is configured. */
  limit?: Promise<Verdict>;
}

export interface Call {
  id: string;
  startedAt: Date;
  /** The runtime this call was taken under; it keeps it to the end even across a reload. */
  runtime: Runtime;
  state: CallState;
  body?: unknown;
  valid?: ValidCall;
  /** Who is calling (identify): the principal, and whether by PAT or session. */
  identity?: Caller;
  model?: ModelRuntime;
  task?: string;
  scan?: ScanResult;
  decision?: Decision;
  /** The decision's record (src/decisions): its id and the SHA-256 the receipt commits to. */
  decisionRecord?: { id: string; sha256: string };
  /** The decision record's write, when it rides in the reservation's script (taken by the meter stage). */
  decisionRide?: DecisionRide;
  reservation?: Reservation;
  /** The request as it goes upstream: redacted, sampling parameters dropped, upstream model id. */
  forward?: Record<string, unknown>;
  answer?: UpstreamAnswer;
  /** Which origin answered (`<route>/<origin name>`), and the fallback model when the route's origins all failed. */
  upstreamOrigin?: string;
  fallbackModel?: string;
  settlement?: Settlement;
  receiptId?: string;
  /** The scope named by the request (jobs API); null on the chat path, where the policy picks one. */
  scopeId: string | null;
  /** The deterministic job id of this request (call/job.ts). */
  jobId?: string;
  ahead?: LookAhead;
  /** Set by the client-abort watcher when the client goes away: the wait stage stops waiting; the job goes on. */
  abort: AbortController;
}

/** A fresh call under `runtime`. */
export function openCall(id: string, runtime: Runtime): Call {
  return { id, startedAt: new Date(), runtime, state: { at: 'admitting' }, scopeId: null, abort: new AbortController() };
}

/** The job the call is bound to, in the states that have one. */
export function callJob(call: Call): JobRecord | undefined {
  const s = call.state;
  return s.at === 'attached' || s.at === 'handed-over' || s.at === 'answered' ? s.job : undefined;
}

/** Whether a job has taken the call over (its runner, or an identical request's, ends it). */
export function handedOver(call: Call): boolean {
  return call.state.at === 'attached' || call.state.at === 'handed-over' || call.state.at === 'answered';
}
