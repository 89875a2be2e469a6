/**
 * Stripe's webhook events, applied: an idempotent function of the event, keyed by its id (the route
 * records the id once the event is applied, and answers a repeat without applying it again).
 *
 * Every effect is itself safe to repeat and to meet out of order, so a duplicate that races past the
 * applied-event record on another instance changes nothing either:
 * - credit grants carry an operation id derived from the Stripe object (`stripe:invoice:<id>`,
 *   `stripe:topup:<checkout session id>`), so two events about one payment grant once;
 * - verification outcomes never lower a rung and are recorded newest-first (verification.ts).
 *
 * The principal an event is about is found in the object's metadata (`principalId`, put there on every
 * object the gateway creates), its `client_reference_id`, or the customer id the gateway linked to the
 * principal before it created any session. An event about nobody the gateway knows is not ours: applied
 * as "ignored". When the metadata names a principal the store does not hold (yet), the event answers 503
 * `webhook-not-ready`: a retry can help.
 *
 * The paid-invoice webhook and the top-up payment are the only sources of allowance; a return to a
 * success URL grants nothing.
 */
import type Stripe from 'stripe';
import { GatewayError } from '../errors.js';
import { grantCredits, setPlan } from '../metering/grants.js';
import type { BillingDeps } from './deps.js';
import { stripeCall } from './stripe.js';
import { cardRegistered, identityChecked } from './verification.js';

type Meta = Stripe.Metadata | null | undefined;

/**
 * Finds the principal: metadata first, then client_reference_id, then the linked customer. Only ids of
 * this deployment's principal domain count as named: a Stripe account shared with other applications
 * sends their events too, and those are not ours (never "not ready").
 */
async function principalOf(d: BillingDeps, metas: Meta[], reference: string | null | undefined, customer: unknown): Promise<string | null> {
  const ours = `did:web:${d.holder.current.gateway.principalDomain}:tenant:`;
  const named = [...metas.map((m) => m?.['principalId']), reference].find((v): v is string => typeof v === 'string' && v.startsWith(ours)) ?? null;
  if (named) {
    if (!(await d.store.getPrincipal(named))) throw new GatewayError('webhook-not-ready', 'the event names a principal this gateway does not hold yet');
    return named;
  }
  const customerId = typeof customer === 'string' ? customer : (customer as { id?: string } | null)?.id;
  return customerId ? d.billing.principalOfCustomer(customerId) : null;
}

const skuOf = (metas: Meta[]): string | null => metas.map((m) => m?.['sku']).find((v) => typeof v === 'string' && v.length > 0) ?? null;

/** The card behind a setup intent: used as the event carries it when expanded, else retrieved. */
async function cardOfSetupIntent(d: BillingDeps, intent: string | Stripe.SetupIntent): Promise<{ funding: string | null; paymentMethod: string }> {
  let si = intent;
  if (typeof si === 'string' || typeof si.payment_method === 'string' || si.payment_method === null) {
    const id = typeof si === 'string' ? si : si.id;
    const client = d.stripe!.client;
    si = await stripeCall(d.log, 'setupIntents.retrieve', () => client.setupIntents.retrieve(id, { expand: ['payment_method'] }));
  }
  const pm = si.payment_method;
  if (pm === null || typeof pm === 'string') {
    if (pm === null) return { funding: null, paymentMethod: 'none' };
    const client = d.stripe!.client;
    const got = await stripeCall(d.log, 'paymentMethods.retrieve', () => client.paymentMethods.retrieve(pm));
    return { funding: got.card?.funding ?? null, paymentMethod: got.id };
  }
  return { funding: pm.card?.funding ?? null, paymentMethod: pm.id };
}

async function checkoutCompleted(d: BillingDeps, event: Stripe.Event, session: Stripe.Checkout.Session): Promise<string> {
  const metas = [session.metadata];
  const principalId = await principalOf(d, metas, session.client_reference_id, session.customer);
  if (!principalId) return 'ignored: no principal of ours';
  const customerId = typeof session.customer === 'string' ? session.customer : session.customer?.id;
  if (customerId) await d.billing.linkCustomer(principalId, customerId);

  if (session.mode === 'setup') {
    if (!session.setup_intent) return 'ignored: setup session without a setup intent';
    const card = await cardOfSetupIntent(d, session.setup_intent);
    return cardRegistered(d, principalId, { ...card, at: event.created * 1000 });
  }
  if (session.mode === 'subscription') return 'subscription started: credits come with each paid invoice';
  if (session.payment_status !== 'paid') return 'payment not settled yet: granted when it succeeds';
  const sku = skuOf(metas);
  const topup = d.holder.current.bundle.billing.data.topups.find((t) => t.sku === sku);
  if (!topup) return `ignored: no top-up ${JSON.stringify(sku)} in the catalog`;
  const operationId = `stripe:topup:${session.id}`;
  if (topup.scope === 'storage') {
    const now = new Date();
    const expires = new Date(now);
    expires.setUTCMonth(expires.getUTCMonth() + (topup.validityMonths ?? 12));
    const applied = await d.billing.grantStorage({ operationId, principalId, microUSD: topup.priceMicroUSD, grantedAt: now.toISOString(), expiresAt: expires.toISOString() });
    return applied ? `storage credits granted: ${topup.priceMicroUSD}` : 'storage credits granted before';
  }
  const r = await grantCredits(d.meter, principalId, topup.priceMicroUSD, operationId, 'stripe-webhook');
  return r.applied ? `credits granted: ${topup.priceMicroUSD}` : 'credits granted before';
}

async function setupSucceeded(d: BillingDeps, event: Stripe.Event, si: Stripe.SetupIntent): Promise<string> {
  const principalId = await principalOf(d, [si.metadata], null, si.customer);
  if (!principalId) return 'ignored: no principal of ours';
  return cardRegistered(d, principalId, { ...(await cardOfSetupIntent(d, si)), at: event.created * 1000 });
}

async function identityEvent(d: BillingDeps, event: Stripe.Event, vs: Stripe.Identity.VerificationSession): Promise<string> {
  const principalId = await principalOf(d, [vs.metadata], vs.client_reference_id, null);
  if (!principalId) return 'ignored: no principal of ours';
  const state = event.type === 'identity.verification_session.verified' ? 'verified' : 'refused';
  const reason = state === 'verified' ? null : (vs.last_error?.code ?? (event.type === 'identity.verification_session.canceled' ? 'canceled' : 'requires_input'));
  return identityChecked(d, principalId, { state, reason, session: vs.id, at: event.created * 1000 });
}

async function invoicePaid(d: BillingDeps, invoice: Stripe.Invoice): Promise<string> {
  // Where the subscription's metadata rides on an invoice moved between API versions: both are read.
  const legacy = (invoice as unknown as { subscription_details?: { metadata?: Meta } }).subscription_details?.metadata;
  const metas = [invoice.metadata, invoice.parent?.subscription_details?.metadata, legacy];
  const principalId = await principalOf(d, metas, null, invoice.customer);
  if (!principalId) return 'ignored: no principal of ours';
  const sku = skuOf(metas);
  const billing = d.holder.current.bundle.billing.data;
  if (!billing.plans.some((p) => p.id === sku)) return `ignored: no plan ${JSON.stringify(sku)} in the catalog`;
  const r = await setPlan(d.meter, billing, principalId, sku, `stripe:invoice:${invoice.id}`, 'stripe-webhook');
  return r.applied ? `plan ${sku}: credits granted ${r.grant.microUSD}` : `plan ${sku}: granted before`;
}

/** Applies one verified event; answers what it did, in words for the log and the webhook's answer. */
export async function applyEvent(d: BillingDeps, event: Stripe.Event): Promise<string> {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      return checkoutCompleted(d, event, event.data.object);
    case 'setup_intent.succeeded':
      return setupSucceeded(d, event, event.data.object);
    case 'identity.verification_session.verified':
    case 'identity.verification_session.requires_input':
    case 'identity.verification_session.canceled':
      return identityEvent(d, event, event.data.object);
    case 'invoice.paid':
      return invoicePaid(d, event.data.object);
    default:
      return `ignored: ${event.type} is not handled`;
  }
}
