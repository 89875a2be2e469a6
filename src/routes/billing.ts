/**
 * The principal's own view of its money and its calls, with a PAT or a browser session (`pat / cookie`):
 *   GET /v1/billing/status   {status: 'connected', plan, balances: [{scope: 'ai', grantedMicroUSD,
 *                            spentMicroUSD, reservedMicroUSD, availableMicroUSD}]}, available = granted -
 *                            spent - reserved, always; plan is the plan id, or null when none was set
 *   GET /v1/receipts/{id}    one of its receipts, signed; another principal's id is answered as not found
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import { PAT_OR_SESSION, resolveCaller, type CallerDeps } from '../auth/caller.js';

export function billingStatus(deps: CallerDeps, meter: Meter) {
  return async function billingStatus(ctx: Context): Promise<void> {
    const identity = await resolveCaller(ctx, deps, PAT_OR_SESSION);
    ctx.body = await meter.status(identity.principal.id);
  };
}

export function ownReceipt(deps: CallerDeps) {
  return async function ownReceipt(ctx: Context): Promise<void> {
    const identity = await resolveCaller(ctx, deps, PAT_OR_SESSION);
    const receipt = await deps.store.getReceipt(String(ctx.params['id']));
    if (!receipt || receipt.principalId !== identity.principal.id) throw new GatewayError('receipt-not-found');
    ctx.body = receipt;
  };
}
