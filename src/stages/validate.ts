/**
 * validate: the request's shape and the spec's limits, against the named model's ceilings
 * (src/openai/request.ts). `chat` for POST /v1/chat/completions, `job` for the strict body of POST
 * /v1/research/jobs.
 */
import type { Context, Next } from 'koa';
import { validateChat, validateJob } from '../openai/request.js';
import type { Call } from '../call/call.js';

export function validate(kind: 'chat' | 'job' = 'chat') {
  // Not async: validation does no I/O (a throw here still reaches singleExit through koa-compose's reject).
  return function validate(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    if (kind === 'job') {
      const valid = validateJob(call.body, call.runtime);
      call.valid = valid;
      call.scopeId = valid.scopeId;
    } else {
      call.valid = validateChat(call.body, call.runtime);
    }
    call.task = call.valid.task;
    return next();
  };
}
