/**
 * The billing routes of the API host.
 *   GET  /v1/billing/catalog   (public) plans, unit prices, top-ups, the listed-but-not-purchasable credit
 *                              tiers, `checkoutEnabled` and `purchasable` per item, from catalog/billing.yaml
 *   POST /v1/billing/checkout  (cookie) {sku, requestId} -> {url, sessionId, sku, requestId}: a hosted
 *                              Checkout Session; the same requestId answers the same session
 *   POST /v1/billing/portal    (cookie) -> {url, sessionId}: the customer portal
 * Buying is a person's act: a PAT (an agent's credential) answers 403 `pat-not-accepted` there.
 *
 * The principal's own view of its money and its calls, with a PAT or a browser session (`pat / cookie`):
 *   GET /v1/billing/status   {status: 'connected', plan, balances: [{scope: 'ai', grantedMicroUSD,
 *                            spentMicroUSD, reservedMicroUSD, availableMicroUSD}]}, available = granted -
 *                            spent - reserved, always; plan is the plan id, or null when none was set;
 *                            a `storage` row follows once storage credits were bought (billing/storage.ts)
 * (its receipts, with their log proofs: routes/receipts.ts)
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { Meter } from '../metering/meter.js';
import type { RuntimeHolder } from '../config/reloader.js';
import type { BillingDeps } from '../billing/deps.js';
import type { BillingStore } from '../billing/store.js';
import { storageBalance } from '../billing/storage.js';
import { checkShape } from '../billing/schemas.js';
import { createCheckout, createPortal, purchasable } from '../billing/sessions.js';
import { requireProcessor } from '../billing/stripe.js';
import { readJson } from '../http/read-json.js';
import type { WhoCalls } from './research.js';
import { PAT_OR_SESSION, resolveCaller, type CallerDeps } from '../auth/caller.js';

export function billingStatus(deps: CallerDeps & { billing: BillingStore }, meter: Meter) {
  return async function billingStatus(ctx: Context): Promise<void> {
    const identity = await resolveCaller(ctx, deps, PAT_OR_SESSION);
    const [status, storage] = await Promise.all([meter.status(identity.principal.id), storageBalance(deps.billing, identity.principal.id)]);
    ctx.body = storage ? { ...status, balances: [...status.balances, storage] } : status;
  };
}

/** The catalog as a buyer sees it: `purchasable` is whether the item can be bought now through checkout. */
export function billingCatalog(holder: RuntimeHolder, stripeConfigured: boolean) {
  return async function billingCatalog(ctx: Context): Promise<void> {
    const doc = holder.current.bundle.billing.data;
    const checkoutEnabled = doc.checkoutEnabled && stripeConfigured;
    ctx.body = {
      version: doc.version,
      currency: doc.currency,
      taxBehavior: 'exclusive',
      checkoutEnabled,
      rates: doc.rates,
      plans: doc.plans.map((p) => ({ sku: p.id, ...p, interval: 'month', purchasable: p.purchasable && checkoutEnabled })),
      topups: doc.topups.map((t) => ({ ...t, purchasable: t.purchasable && checkoutEnabled })),
      creditTiers: doc.creditTiers.map((t) => ({ sku: `credits-${t.usd}`, ...t, interval: 'month', purchasable: t.purchasable && checkoutEnabled })),
    };
  };
}

export function billingCheckout(d: BillingDeps, caller: WhoCalls) {
  return async function billingCheckout(ctx: Context): Promise<void> {
    const { principal } = await caller(ctx);
    const body = checkShape<{ sku: string; requestId: string }>('checkout', await readJson(ctx, d.holder.current.gateway.limits.bodyBytes));
    const reused = () => new GatewayError('request-id-reused', `requestId ${JSON.stringify(body.requestId)} was used for another sku`);
    const known = await d.billing.getCheckout(principal.id, body.requestId);
    if (known && known.sku !== body.sku) throw reused();
    if (!known) {
      purchasable(d.holder.current.bundle.billing.data, body.sku);
      requireProcessor(d.stripe);
    }
    const stored =
      known ??
      (await (async () => {
        const page = await createCheckout(d, principal.id, body.sku, body.requestId);
        return d.billing.putCheckout(principal.id, body.requestId, {
          sku: body.sku,
          sessionId: page.sessionId,
          url: page.url,
          createdAt: new Date().toISOString(),
        });
      })());
    if (stored.sku !== body.sku) throw reused();
    ctx.body = { url: stored.url, sessionId: stored.sessionId, sku: stored.sku, requestId: body.requestId };
  };
}

export function billingPortal(d: BillingDeps, caller: WhoCalls) {
  return async function billingPortal(ctx: Context): Promise<void> {
    const { principal } = await caller(ctx);
    const page = await createPortal(d, principal.id);
    ctx.body = { url: page.url, sessionId: page.sessionId };
  };
}
