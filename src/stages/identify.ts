/**
 * identify (admission step 1): who is calling — a PAT or a session cookie (the rules are in
 * auth/caller.ts, the token's check in auth/bearer.ts). A Bearer personal access token is checked for shape and checksum locally (a typo never
 * costs a store round trip), then resolved by its SHA-256 in one store call. Nothing about the token's or
 * the session's state is cached: a revocation or sign-out written by any gateway instance is seen by the
 * very next request here.
 */
import type { Context, Next } from 'koa';
import { resolveCaller, type CallerDeps } from '../auth/caller.js';
import type { Call } from './call.js';

/**
 * Koa stage for `pat / cookie` routes: the caller goes on `call.identity` (and `ctx.state.caller`). With
 * `alongside` (the job lookup, stages/job.ts), a request whose token was seen before also looks up its job
 * in the same round trip as its token.
 */
export function identify(deps: CallerDeps, alongside?: (call: Call, principalId: string) => void) {
  return async function identify(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    call.identity = ctx.state.caller = await resolveCaller(ctx, deps, {
      via: ['pat', 'session'],
      ...(alongside ? { alongside: (pid: string) => alongside(call, pid) } : {}),
    });
    await next();
  };
}
