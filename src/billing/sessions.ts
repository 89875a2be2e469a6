/**
 * The hosted pages a person completes at the payment processor, created for a principal:
 * - card verification: a Checkout Session in `setup` mode (a card registered, never charged);
 * - identity (L2): a Stripe Identity verification session, document plus a matching selfie;
 * - a purchase: a Checkout Session in `subscription` mode for a plan, `payment` mode for a top-up, in USD,
 *   prices tax-exclusive, built from catalog/billing.yaml (the one source of the catalog); a top-up's
 *   session asks Stripe for an invoice (`invoice_creation`), since only a paid invoice grants credits;
 * - the customer portal, for billing and cancellation.
 *
 * Every session is made for the principal's Stripe customer (created and linked first, so any later
 * event about the customer finds the principal), carries `client_reference_id` = the principal id and
 * `metadata: {principalId, sku, requestId}`, and puts the same metadata on the setup intent, subscription
 * or payment intent it leads to — that is where the webhooks look.
 */
import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import { GatewayError } from '../errors.js';
import type { BillingDoc } from '../config/types.js';
import type { BillingDeps } from './deps.js';
import { requireProcessor, stripeCall } from './stripe.js';

export const CARD_VERIFICATION_SKU = 'card-verification';

/** Micro-USD to Stripe's cents: the catalog holds whole cents, so this never rounds. */
export function cents(microUSD: number): number {
  if (microUSD % 10_000 !== 0) throw new GatewayError('internal-error');
  return microUSD / 10_000;
}

/** The principal's Stripe customer, created on first need; of two racing creations the first stored wins. */
export async function ensureCustomer(d: BillingDeps, principalId: string): Promise<string> {
  const known = await d.billing.customerOf(principalId);
  if (known) return known;
  const { client } = requireProcessor(d.stripe);
  const customer = await stripeCall(d.log, 'customers.create', () =>
    client.customers.create({ metadata: { principalId } }, { idempotencyKey: `customer:${principalId}` }),
  );
  return d.billing.linkCustomer(principalId, customer.id);
}

export interface HostedPage {
  url: string;
  kind: 'card' | 'identity' | 'checkout' | 'portal';
  sessionId: string;
  expiresAt: string | null;
}

const expiry = (epochSeconds: number | null | undefined) => (epochSeconds ? new Date(epochSeconds * 1000).toISOString() : null);

function pageUrl(url: string | null | undefined): string {
  // A session without a URL is of no use to a person; the processor answered something unexpected.
  if (!url) throw new GatewayError('payment-processor-error', 'the payment processor returned no URL for the session');
  return url;
}

export async function startCardVerification(d: BillingDeps, principalId: string, scope: { scopeId: string; tasks: string[] }): Promise<HostedPage> {
  const p = requireProcessor(d.stripe);
  const customer = await ensureCustomer(d, principalId);
  const metadata = { principalId, sku: CARD_VERIFICATION_SKU, requestId: randomUUID(), scopeId: scope.scopeId, tasks: scope.tasks.join(',') };
  const session = await stripeCall(d.log, 'checkout.sessions.create', () =>
    p.client.checkout.sessions.create({
      mode: 'setup',
      currency: 'usd',
      customer,
      client_reference_id: principalId,
      metadata,
      setup_intent_data: { metadata },
      success_url: `${d.origins.console}/verification/done?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${d.origins.console}/verification`,
    }),
  );
  return { url: pageUrl(session.url), kind: 'card', sessionId: session.id, expiresAt: expiry(session.expires_at) };
}

export async function startIdentityVerification(d: BillingDeps, principalId: string, scope: { scopeId: string; tasks: string[] }): Promise<HostedPage> {
  const p = requireProcessor(d.stripe);
  await ensureCustomer(d, principalId);
  const session = await stripeCall(d.log, 'identity.verificationSessions.create', () =>
    p.client.identity.verificationSessions.create({
      type: 'document',
      options: { document: { require_matching_selfie: true } },
      client_reference_id: principalId,
      metadata: { principalId, sku: 'identity-verification', requestId: randomUUID(), scopeId: scope.scopeId, tasks: scope.tasks.join(',') },
      return_url: `${d.origins.console}/verification/done`,
    }),
  );
  return { url: pageUrl(session.url), kind: 'identity', sessionId: session.id, expiresAt: null };
}

/** What a sku is in the catalog; throws the 4xx that says why it cannot be bought. */
export function purchasable(
  billing: BillingDoc,
  sku: string,
): { kind: 'plan'; plan: BillingDoc['plans'][number] } | { kind: 'topup'; topup: BillingDoc['topups'][number] } {
  const plan = billing.plans.find((x) => x.id === sku);
  const topup = billing.topups.find((x) => x.sku === sku);
  const tier = /^credits-(\d+)$/.exec(sku);
  const listedTier = tier ? billing.creditTiers.find((t) => t.usd === Number(tier[1])) : undefined;
  const item = plan ?? topup ?? listedTier;
  if (!item)
    throw new GatewayError(
      'unknown-sku',
      `no sku ${JSON.stringify(sku)}; plans: ${billing.plans.map((x) => x.id).join(', ')}; top-ups: ${billing.topups.map((x) => x.sku).join(', ')}`,
    );
  if (!item.purchasable) throw new GatewayError('sku-not-purchasable', `${sku} is listed but not purchasable yet`);
  if (!billing.checkoutEnabled) throw new GatewayError('checkout-disabled');
  return plan ? { kind: 'plan', plan } : { kind: 'topup', topup: topup! };
}

export async function createCheckout(d: BillingDeps, principalId: string, sku: string, requestId: string): Promise<HostedPage> {
  const p = requireProcessor(d.stripe);
  const item = purchasable(d.holder.current.bundle.billing.data, sku);
  const customer = await ensureCustomer(d, principalId);
  const metadata = { principalId, sku, requestId };
  const common = {
    customer,
    client_reference_id: principalId,
    metadata,
    success_url: `${d.origins.console}/billing/done?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${d.origins.console}/billing`,
  };
  const params: Stripe.Checkout.SessionCreateParams =
    item.kind === 'plan'
      ? {
          ...common,
          mode: 'subscription',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: 'usd',
                unit_amount: cents(item.plan.priceMicroUSD),
                tax_behavior: 'exclusive',
                recurring: { interval: 'month' },
                product_data: { name: `${item.plan.name} plan`, metadata: { sku } },
              },
            },
          ],
          subscription_data: { metadata },
        }
      : {
          ...common,
          mode: 'payment',
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: 'usd',
                unit_amount: cents(item.topup.priceMicroUSD),
                tax_behavior: 'exclusive',
                product_data: { name: item.topup.name, metadata: { sku } },
              },
            },
          ],
          payment_intent_data: { metadata },
          // A one-time payment makes no invoice unless asked; its paid invoice is what grants the credits.
          invoice_creation: { enabled: true, invoice_data: { metadata } },
        };
  // Stripe's own idempotency covers two instances racing on one request id: both get the same session.
  const session = await stripeCall(d.log, 'checkout.sessions.create', () =>
    p.client.checkout.sessions.create(params, { idempotencyKey: `checkout:${principalId}:${requestId}` }),
  );
  return { url: pageUrl(session.url), kind: 'checkout', sessionId: session.id, expiresAt: expiry(session.expires_at) };
}

export async function createPortal(d: BillingDeps, principalId: string): Promise<HostedPage> {
  const p = requireProcessor(d.stripe);
  const customer = await ensureCustomer(d, principalId);
  const session = await stripeCall(d.log, 'billingPortal.sessions.create', () =>
    p.client.billingPortal.sessions.create({ customer, return_url: `${d.origins.console}/billing` }),
  );
  return { url: pageUrl(session.url), kind: 'portal', sessionId: session.id, expiresAt: null };
}
