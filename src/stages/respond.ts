/**
 * respond: the one way out for an answered call, the finished job's chat.completion (src/openai/completion.ts):
 * as it is, or as the emulated stream when the request asked for `stream: true`. The first byte goes out
 * when the answer is complete.
 */
import type { Context, Next } from 'koa';
import type { Call } from '../call/call.js';
import { callJob } from '../call/call.js';
import { streamBody } from '../openai/completion.js';

// The tests of the stream's bytes import it from here, where it was first written.
export { streamBody };

export function respond() {
  // Not async: no I/O here, and every answered call passes through it.
  return function respond(ctx: Context, next: Next): Promise<void> {
    const call = ctx.state.call as Call;
    const completion = callJob(call)!.result!.completion;
    if (call.valid!.stream) {
      ctx.set('content-type', 'text/event-stream');
      ctx.set('cache-control', 'no-cache');
      ctx.body = streamBody(completion, call.valid!.includeUsage);
    } else {
      ctx.body = completion;
    }
    return next();
  };
}
