/**
 * The principal's own record of its calls, for the console and any API client (pat / cookie):
 *   GET /v1/receipts?day=YYYY-MM-DD   {principalId, day, data: [receipt...]}: that UTC day's receipts
 *                                     (today when absent), the same list the operator's admin listing gives
 *   GET /v1/usage?days=N              {principalId, days: [{day, models: {<model>: {calls, tokens,
 *                                     chargedMicroUSD}}}]}: the last N UTC days (1..31, default 30), oldest
 *                                     first, summed from the receipts: calls answered, tokens counted
 *                                     (prompt, cached prompt included, and completion), micro-USD charged;
 *                                     and `today`: the meter's counters for the current UTC day (free
 *                                     allowance used and held, rung-allowance tokens used and held)
 * Both read only the caller's own receipts.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import type { Store } from '../store/store.js';
import { dayParam } from '../app/day-param.js';
import type { Receipt } from '../store/store.js';
import type { Usage } from '../metering/price.js';
import type { WhoCalls } from './research.js';

export function ownReceipts(store: Store, meter: Meter, caller: WhoCalls) {
  return async function ownReceipts(ctx: Context): Promise<void> {
    const principalId = (await caller(ctx)).principal.id;
    const day = dayParam(ctx, meter.today());
    ctx.body = { principalId, day, data: await store.listReceipts(principalId, day) };
  };
}

/** The UTC days ending with `today`, oldest first. */
export function lastDays(today: string, n: number): string[] {
  const end = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: n }, (_, i) => new Date(end - (n - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

/** The tokens the upstream reported for the call (prompt, cached prompt included, plus completion). */
function tokensOf(r: Receipt): number {
  const u = r['usage'] as Partial<Usage> | null | undefined;
  return u ? (u.total_tokens ?? (u.prompt_tokens ?? 0) + (u.completion_tokens ?? 0)) : 0;
}

export function usageSummary(store: Store, meter: Meter, caller: WhoCalls) {
  return async function usageSummary(ctx: Context): Promise<void> {
    const principalId = (await caller(ctx)).principal.id;
    const raw = ctx.query['days'] ?? '30';
    if (typeof raw !== 'string' || !/^\d{1,2}$/.test(raw) || Number(raw) < 1 || Number(raw) > 31) {
      throw new GatewayError('invalid-request', 'days must be a whole number from 1 to 31');
    }
    const days = lastDays(meter.today(), Number(raw));
    const [today, ...lists] = await Promise.all([meter.usage(principalId, days.at(-1)!), ...days.map((day) => store.listReceipts(principalId, day))]);
    ctx.body = {
      principalId,
      today,
      days: days.map((day, i) => {
        const models: Record<string, { calls: number; tokens: number; chargedMicroUSD: number }> = {};
        for (const r of lists[i]!) {
          if (r['outcome'] !== 'answered') continue;
          const m = (models[String(r['model'])] ??= { calls: 0, tokens: 0, chargedMicroUSD: 0 });
          m.calls += 1;
          m.tokens += tokensOf(r);
          m.chargedMicroUSD += Number(r['chargedMicroUSD'] ?? 0);
        }
        return { day, models };
      }),
    };
  };
}
