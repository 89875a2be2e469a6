/** The `?day=YYYY-MM-DD` query of the admin listings (receipts, reviews): a UTC date, today when absent. */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function dayParam(ctx: Context, today: string): string {
  const day = ctx.query['day'];
  if (day === undefined) return today;
  if (typeof day !== 'string' || !DAY.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
    throw new GatewayError('invalid-request', 'day must be a UTC date, YYYY-MM-DD');
  }
  return day;
}
