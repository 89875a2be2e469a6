/**
 * Opens a call: a fresh id, the runtime snapshot the call will keep to its end, and an AbortController that
 * fires when the client goes away before its answer was written: the call stops waiting for its job, and
 * the job (which belongs to the principal, not the connection) runs on to its end.
 */
import type { Context, Next } from 'koa';
import { randomUUID } from 'node:crypto';
import type { RuntimeHolder } from '../config/reloader.js';
import { openCall as newCall, type Call } from '../call/call.js';
import type { ServerResponse } from 'node:http';

const CALL = Symbol('call');

/** The response's 'close' listener, one function for every call: a client gone before its answer aborts the wait. */
function closed(this: ServerResponse & { [CALL]?: Call }): void {
  if (!this.writableFinished) this[CALL]?.abort.abort();
}

export function openCall(holder: RuntimeHolder) {
  // Not async: no I/O here, and every call passes through it.
  return function openCall(ctx: Context, next: Next): Promise<void> {
    const call = newCall(randomUUID(), holder.current);
    ctx.state.call = call;
    (ctx.res as ServerResponse & { [CALL]?: Call })[CALL] = call;
    ctx.res.on('close', closed);
    return next();
  };
}
