/**
 * The operator plane's billing routes (mounted by admin.ts, behind the operator token):
 *   POST /admin/principals/:id/credits    {microUSD, operationId?}  credit grant, idempotent on operationId
 *   POST /admin/principals/:id/plan       {plan, operationId?}      set the plan and credit its AI credits
 *   GET  /admin/principals/:id/billing    ?day=  the billing status plus the day's counters
 *   GET  /admin/principals/:id/receipts   ?day=YYYY-MM-DD (default: today, UTC)  the day's receipts
 *   GET  /admin/receipt-key               the public key the receipt log's checkpoints are signed with
 * A grant answers 201 when it was applied now, 200 when its operation id had been applied before.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { GatewayError } from '../errors.js';
import { readJson } from '../http/read-json.js';
import { requirePrincipal } from '../auth/principals.js';
import { grantCredits, setPlan } from '../metering/grants.js';
import type { GrantResult } from '../metering/meter.js';
import { dayParam } from './day-param.js';

function optionalString(v: unknown, field: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new GatewayError('invalid-request', `${field} must be a string`);
  return v;
}

export function mountBillingAdmin(router: Router, deps: Deps): void {
  const { store, holder, meter, receipts } = deps;
  const body = async (ctx: Context) => ((await readJson(ctx, holder.current.gateway.limits.bodyBytes)) ?? {}) as Record<string, unknown>;
  const answer = async (ctx: Context, principalId: string, result: GrantResult) => {
    ctx.status = result.applied ? 201 : 200;
    ctx.body = { applied: result.applied, grant: result.grant, billing: await meter.status(principalId) };
  };

  router.post('/principals/:id/credits', async (ctx) => {
    const id = (await requirePrincipal(store, ctx.params['id']!)).id;
    const b = await body(ctx);
    await answer(ctx, id, await grantCredits(meter, id, b['microUSD'], optionalString(b['operationId'], 'operationId'), 'operator'));
  });
  router.post('/principals/:id/plan', async (ctx) => {
    const id = (await requirePrincipal(store, ctx.params['id']!)).id;
    const b = await body(ctx);
    await answer(ctx, id, await setPlan(meter, holder.current.bundle.billing.data, id, b['plan'], optionalString(b['operationId'], 'operationId'), 'operator'));
  });
  router.get('/principals/:id/billing', async (ctx) => {
    const id = (await requirePrincipal(store, ctx.params['id']!)).id;
    ctx.body = { ...(await meter.status(id)), usage: await meter.usage(id, dayParam(ctx, meter.today())) };
  });
  router.get('/principals/:id/receipts', async (ctx) => {
    const id = ctx.params['id']!;
    const day = dayParam(ctx, meter.today());
    ctx.body = { principalId: id, day, data: await store.listReceipts(id, day) };
  });
  router.get('/receipt-key', (ctx) => {
    const k = receipts.publicInfo();
    ctx.body = { alg: k.alg, keyId: k.keyId, publicKeyPem: k.publicKeyPem, verifierKey: k.verifierKey, logName: k.name, ephemeral: k.ephemeral === true };
  });
}
