/**
 * The principal's own view of its money and its calls, with a PAT (session auth comes later):
 *   GET /v1/billing/status   {status: 'connected', plan, balances: [{scope: 'ai', grantedMicroUSD,
 *                            spentMicroUSD, reservedMicroUSD, availableMicroUSD}]}, available = granted -
 *                            spent - reserved, always; plan is the plan id, or null when none was set
 * (its receipts, with their log proofs: routes/receipts.ts)
 */
import type { Context } from 'koa';
import type { Meter } from '../metering/meter.js';
import { bearerToken, resolveToken } from '../stages/identify.js';
import type { Store } from '../store/store.js';

export function billingStatus(store: Store, meter: Meter) {
  return async function billingStatus(ctx: Context): Promise<void> {
    const identity = await resolveToken(store, bearerToken(ctx));
    ctx.body = await meter.status(identity.principal.id);
  };
}
