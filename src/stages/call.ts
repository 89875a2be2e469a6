/**
 * The state one call carries through the pipeline (`ctx.state.call`). Each stage reads what earlier stages
 * wrote and adds its own part; nothing else travels between stages.
 */
import type { ModelRuntime, Runtime } from '../config/compile.js';
import type { Decision } from '../policy/engine.js';
import type { ScanResult } from '../guard/index.js';
import type { Caller } from '../auth/caller.js';
import type { Reservation, Settlement } from '../metering/meter.js';
import type { ValidCall } from './validate.js';
import type { UpstreamAnswer } from '../upstream/forward.js';
import type { JobRecord } from '../jobs/job.js';

export interface Call {
  id: string;
  startedAt: Date;
  /** The runtime this call was taken under; it keeps it to the end even across a reload. */
  runtime: Runtime;
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
  /** The deterministic job id of this request (jobs/job.ts). */
  jobId?: string;
  /** The job lookup started alongside the token lookup (stages/job.ts lookAhead), for `attach`. */
  lookahead?: { principalId: string; jobId: string; job: Promise<JobRecord | null> };
  /**
   * What the reservation's write did about the call's job (meter stage): created it (this record, to run),
   * or found the live job of an identical request to attach to. Unset: no job yet (the run stage creates it).
   */
  created?: JobRecord | { attachTo: JobRecord };
  /** True once a job owns the reservation and the receipt: the HTTP side no longer ends the call. */
  handedOver?: boolean;
  /** The finished job this request re-attached to or waited for. */
  job?: JobRecord;
  /** Set by the client-abort watcher when the client goes away: the wait stage stops waiting; the job goes on. */
  abort: AbortController;
}

export interface CallContextState {
  call: Call;
}
