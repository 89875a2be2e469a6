/**
 * The single exit (Koa's handleRequest then/catch): every error a stage throws leaves here, once, as
 * `{error:{code,message}}` with the status from the error table. Anything that is not a GatewayError is our
 * bug or an outage; it is logged by name only and answered without detail.
 */
import type { Context, Next } from 'koa';
import { GatewayError, toWire } from '../errors.js';
import { StoreUnavailable } from '../store/errors.js';
import type { Logger } from '../log.js';

export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof StoreUnavailable) return new GatewayError('store-unavailable');
  return new GatewayError('internal-error');
}

export function singleExit(log: Logger) {
  return async function singleExit(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw new GatewayError('not-found');
      // 501: @koa/router's answer to a method no route knows (TRACE, PROPFIND...); to a client it is a method
      // not allowed here, and it must leave as JSON like every other error (found by schemathesis).
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) throw new GatewayError('method-not-allowed');
    } catch (err) {
      const e = asGatewayError(err);
      if (e.code === 'internal-error' || e.code === 'store-unavailable') {
        // The message of an unexpected error could quote input; log its name and where it was thrown only.
        const frames = (err as Error)?.stack?.split('\n').slice(1, 4).map((f) => f.trim());
        log.error('request.failed', { path: ctx.path, code: e.code, error: (err as Error)?.name, frames });
      }
      ctx.status = e.status;
      ctx.type = 'application/json';
      // A call that left a receipt (refused at step 3 or later, or failed) names it, so the caller can
      // quote it and an operator can find it (`portcullis admin receipts`).
      const receiptId = (ctx.state as { call?: { receiptId?: string } }).call?.receiptId;
      if (receiptId) ctx.set('x-receipt-id', receiptId);
      ctx.body = toWire(e, receiptId);
    }
  };
}
