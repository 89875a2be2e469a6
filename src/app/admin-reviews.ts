/**
 * The operator review list on the admin API (mounted by admin.ts, behind the operator token):
 *   GET /admin/reviews?day=YYYY-MM-DD&offset=&limit=   the day's flagged calls (default: today, UTC),
 *                                                     oldest first, up to 1000 a page
 * Each entry: callId, principalId, receiptId, the flagged rule ids and where they matched, model, task,
 * time. Never prompt text: the receipt (GET /admin/receipts/{receiptId}) has the rest of the call.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { GatewayError } from '../errors.js';
import { MAX_REVIEW_PAGE } from '../reviews/store.js';
import { dayParam } from './day-param.js';

function count(ctx: Context, name: string, fallback: number, max: number): number {
  const v = ctx.query[name];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !/^\d+$/.test(v) || Number(v) > max) throw new GatewayError('invalid-request', `${name} must be an integer from 0 to ${max}`);
  return Number(v);
}

export function mountReviewsAdmin(router: Router, deps: Pick<Deps, 'reviews' | 'meter'>): void {
  router.get('/reviews', async (ctx) => {
    const d = dayParam(ctx, deps.meter.today());
    const offset = count(ctx, 'offset', 0, Number.MAX_SAFE_INTEGER);
    const limit = count(ctx, 'limit', MAX_REVIEW_PAGE, MAX_REVIEW_PAGE);
    ctx.body = await deps.reviews.list(d, offset, limit);
  });
}
