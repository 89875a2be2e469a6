/**
 * The principal's own view of its money and its calls, with a PAT (session auth comes later):
 *   GET /v1/billing/status   {status: 'connected', plan, balances: [{scope: 'ai', grantedMicroUSD,
 *                            spentMicroUSD, reservedMicroUSD, availableMicroUSD}]}, available = granted -
 *                            spent - reserved, always; plan is the plan id, or null when none was set
 *   GET /v1/receipts/{id}    one of its receipts, signed; another principal's id is answered as not found
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import { bearerToken, resolveToken } from '../stages/identify.js';
import type { Store } from '../store/store.js';

export function billingStatus(store: Store, meter: Meter) {
  return async function billingStatus(ctx: Context): Promise<void> {
    const identity = await resolveToken(store, bearerToken(ctx));
    ctx.body = await meter.status(identity.principal.id);
  };
}

export function ownReceipt(store: Store) {
  return async function ownReceipt(ctx: Context): Promise<void> {
    const identity = await resolveToken(store, bearerToken(ctx));
    const receipt = await store.getReceipt(String(ctx.params['id']));
    if (!receipt || receipt.principalId !== identity.principal.id) throw new GatewayError('receipt-not-found');
    ctx.body = receipt;
  };
}
