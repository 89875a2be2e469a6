/**
 * Opens a call: a fresh id, the runtime snapshot the call will keep to its end, and an AbortController that
 * fires when the client goes away before its answer was written: the call stops waiting for its job, and
 * the job (which belongs to the principal, not the connection) runs on to its end.
 */
import type { Context, Next } from 'koa';
import { randomUUID } from 'node:crypto';
import type { RuntimeHolder } from '../config/reloader.js';
import { openCall as newCall } from '../call/call.js';

export function openCall(holder: RuntimeHolder) {
  // Not async: no I/O here, and every call passes through it.
  return function openCall(ctx: Context, next: Next): Promise<void> {
    const call = newCall(randomUUID(), holder.current);
    ctx.state.call = call;
    const onClose = () => {
      if (!ctx.res.writableFinished) call.abort.abort();
    };
    ctx.res.once('close', onClose);
    return next();
  };
}
