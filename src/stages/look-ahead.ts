/**
 * lookAhead (just before identify): for a bearer token seen before (auth/token.ts knows its principal
 * without asking the store), the lookups that need the principal id start here, so that they go to the
 * store in the same round trip as identify's token lookup, which follows synchronously: the job of an
 * identical request (read by `attach`) and the principal's rate-limit hit (read by `limitPrincipal`). They
 * are recorded on `call.ahead` and used only when identify confirms the principal; a token seen for the
 * first time starts nothing here, and those stages ask for themselves.
 */
import type { Context, Next } from 'koa';
import { bearerToken } from '../http/bearer.js';
import { knownPrincipal } from '../auth/token.js';
import type { JobStore } from '../jobs/store.js';
import type { Verdict } from '../ratelimit/limiter.js';
import type { Call } from '../call/call.js';
import { callJobId } from '../call/job.js';

export function lookAhead(jobs: JobStore, principalHit: (principalId: string) => Promise<Verdict> | undefined) {
  // Not async: it must hand on in the same tick, so identify's store call joins the same write.
  return function lookAhead(ctx: Context, next: Next): Promise<void> {
    const principalId = knownPrincipal(bearerToken(ctx));
    if (principalId !== undefined) {
      const call = ctx.state.call as Call;
      const jobId = callJobId(call, principalId);
      const job = jobs.get(jobId);
      job.catch(() => undefined); // awaited by `attach`, or dropped when the call ends before it
      const limit = principalHit(principalId);
      call.ahead = limit ? { principalId, jobId, job, limit } : { principalId, jobId, job };
    }
    return next();
  };
}
