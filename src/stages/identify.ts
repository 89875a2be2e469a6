/**
 * identify (admission step 1): who is calling — a PAT or a session cookie, by the rules of auth/caller.ts
 * (a PAT resolved by auth/token.ts). Token and principal records come from the store's identity cache on
 * Redis (src/store/identity-cache.ts), which Redis keeps true: a revocation, a changed principal or a
 * sign-out written by any gateway instance is seen by the very next request here. The caller
 * goes on `call.identity` (and `ctx.state.caller`).
 */
import type { Context, Next } from 'koa';
import { resolveCaller, PAT_OR_SESSION, type CallerDeps } from '../auth/caller.js';
import type { Call } from '../call/call.js';

export function identify(deps: CallerDeps) {
  return async function identify(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    call.identity = ctx.state.caller = await resolveCaller(ctx, deps, PAT_OR_SESSION);
    await next();
  };
}
