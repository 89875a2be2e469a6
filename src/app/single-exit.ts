/**
 * The single exit (Koa's handleRequest then/catch): every error a stage throws leaves here, once, as
 * `{error:{code,message}}` with the status from the error table. Anything that is not a GatewayError is our
 * bug or an outage; it is logged by name only and answered without detail.
 */
import type { Context, Next } from 'koa';
import { GatewayError, toWire } from '../errors.js';
import { StoreUnavailable, storeGatewayError } from '../store/errors.js';
import type { Logger } from '../log.js';

export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return storeGatewayError(err) ?? new GatewayError('internal-error');
}

/**
 * Refusals that the same request, sent again, meets again: `x-should-retry: false` tells the OpenAI SDKs
 * (which otherwise retry 408, 409, 429 and 5xx, and nothing else by default) to raise at once. Every 4xx but
 * 408 (timeout), 409 (a job or operation still in progress) and 429 (rate limits: retry-after says when),
 * and the 5xx answers that are the configuration's or the upstream's fixed answer, not an outage.
 */
const PERMANENT_5XX: ReadonlySet<string> = new Set(['route-not-configured', 'upstream-model-mismatch', 'upstream-answer-too-large']);

export function retryCannotHelp(e: GatewayError): boolean {
  if (e.status >= 400 && e.status < 500) return e.status !== 408 && e.status !== 409 && e.status !== 429;
  return PERMANENT_5XX.has(e.code);
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
      // The route pattern, never the path: a path holds ids (receipts, jobs, principals).
      const route = (ctx.state.route as string | undefined) ?? (ctx as Context & { routerPath?: string }).routerPath ?? 'unmatched';
      if (e.code === 'store-unavailable') {
        // An outage, not a bug: our own message says which call and why (a deadline, a lost connection).
        log.warn('request.store_unavailable', { route, reason: err instanceof StoreUnavailable ? err.message : e.code });
      } else if (e.code === 'internal-error') {
        // The message of an unexpected error could quote input; log its name and where it was thrown only.
        const frames = (err as Error)?.stack
          ?.split('\n')
          .slice(1, 4)
          .map((f) => f.trim());
        log.error('request.failed', { route, code: e.code, error: (err as Error)?.name, frames });
      }
      ctx.status = e.status;
      if (retryCannotHelp(e)) ctx.set('x-should-retry', 'false');
      ctx.type = 'application/json';
      // A call that left a receipt (refused at step 3 or later, or failed) names it, so the caller can
      // quote it and an operator can find it (`portcullis admin receipts`).
      const receiptId = (ctx.state as { call?: { receiptId?: string } }).call?.receiptId;
      if (receiptId) ctx.set('x-receipt-id', receiptId);
      ctx.body = toWire(e, receiptId);
    }
  };
}
