/**
 * Stripe's webhook events, applied: an idempotent function of the event, keyed by its id (the route
 * records the id once the event is applied, and answers a repeat without applying it again).
 *
 * Every effect is itself safe to repeat and to meet out of order, so a duplicate that races past the
 * applied-event record on another instance changes nothing either:
 * - credit grants carry an operation id derived from the invoice (`stripe:invoice:<id>`), so two events
 *   about one payment grant once;
 * - clawbacks carry the event's id, and settle a claim (a charge's refunds, one dispute) up to its total;
 * - verification outcomes never lower a rung and are recorded newest-first (verification.ts).
 *
 * The principal an event is about is found in the object's metadata (`principalId`, put there on every
 * object the gateway creates), its `client_reference_id`, or the customer id the gateway linked to the
 * principal before it created any session. An event about nobody the gateway knows is not ours: applied
 * as "ignored". When the metadata names a principal the store does not hold (yet), the event answers 503
 * `webhook-not-ready`: a retry can help.
 *
 * Allowance has one source: `invoice.paid` with `amount_paid > 0` in the catalog's currency, whose lines
 * come to the catalog's price of the plan or top-up it names (a plan only for a subscription's first or
 * renewal invoice). It grants the catalog's credits in proportion to what was paid (before tax) over that
 * price, floored: never more than was paid, whatever a coupon or a customer balance covered.
 * A completed checkout links the customer and grants nothing, nor does a return to a success URL.
 * Refunds (`charge.refunded`) and disputes (`charge.dispute.created`) take back the same share of the
 * credits the invoice granted, never below what has been spent.
 */
import type Stripe from 'stripe';
import { GatewayError } from '../errors.js';
import { grantCredits, setPlan } from '../metering/grants.js';
import type { BillingDeps } from './deps.js';
import { cents } from './sessions.js';
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
  return session.payment_status === 'paid'
    ? 'payment received: credits come with its paid invoice'
    : 'payment not settled yet: credits come with its paid invoice';
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
  const reason =
    state === 'verified' ? null : (vs.last_error?.code ?? (event.type === 'identity.verification_session.canceled' ? 'canceled' : 'requires_input'));
  return identityChecked(d, principalId, { state, reason, session: vs.id, at: event.created * 1000 });
}

/**
 * What the invoice was paid for what was bought, in cents: `amount_paid` less the tax the invoice adds
 * (`total - total_excluding_tax`), since the catalog's prices are before tax.
 */
function paidBeforeTax(invoice: Stripe.Invoice): number {
  const tax =
    typeof invoice.total === 'number' && typeof invoice.total_excluding_tax === 'number' ? Math.max(0, invoice.total - invoice.total_excluding_tax) : 0;
  return Math.max(0, invoice.amount_paid - tax);
}

/** The catalog's `credits` in proportion to `paidCents` of `priceCents`, floored, and never above `credits`. */
export function creditsForPayment(credits: number, paidCents: number, priceCents: number): number {
  if (priceCents <= 0 || paidCents >= priceCents) return credits;
  return Math.floor((credits * paidCents) / priceCents);
}

/** Billing reasons of a subscription invoice that pay for a period of the plan (not a proration). */
const PLAN_PERIOD = new Set(['subscription_create', 'subscription_cycle']);

async function invoicePaid(d: BillingDeps, invoice: Stripe.Invoice): Promise<string> {
  // Where the subscription's metadata rides on an invoice moved between API versions: both are read.
  const legacy = (invoice as unknown as { subscription_details?: { metadata?: Meta } }).subscription_details?.metadata;
  const lines = invoice.lines?.data ?? [];
  const metas = [invoice.metadata, invoice.parent?.subscription_details?.metadata, legacy, ...lines.map((l) => l.metadata)];
  const principalId = await principalOf(d, metas, null, invoice.customer);
  if (!principalId) return 'ignored: no principal of ours';
  if (!(typeof invoice.amount_paid === 'number' && invoice.amount_paid > 0)) return 'ignored: nothing was paid (amount_paid is 0)';
  const billing = d.holder.current.bundle.billing.data;
  if (typeof invoice.currency !== 'string' || invoice.currency.toLowerCase() !== billing.currency.toLowerCase()) {
    return `ignored: the invoice is in ${JSON.stringify(invoice.currency ?? null)}, the catalog's prices are in ${billing.currency}`;
  }
  const sku = skuOf(metas);
  const plan = billing.plans.find((p) => p.id === sku);
  const topup = billing.topups.find((t) => t.sku === sku);
  if (!plan && !topup) return `ignored: no plan or top-up ${JSON.stringify(sku)} in the catalog`;
  if (plan && !PLAN_PERIOD.has(invoice.billing_reason ?? ''))
    return `ignored: a ${invoice.billing_reason ?? 'no'} invoice pays for no period of plan ${plan.id}`;
  // The amount comes from the invoice's lines (tax-exclusive), checked against the catalog: metadata
  // names what was bought, the lines say what was charged for it.
  const charged = lines.reduce((sum, l) => sum + (typeof l.amount === 'number' ? l.amount : 0), 0);
  const price = cents((plan ?? topup)!.priceMicroUSD);
  if (charged !== price) return `ignored: the invoice's lines come to ${charged} cents, the catalog's ${sku} costs ${price}`;
  // What was paid (a coupon or the customer's balance may have covered the rest) buys its share of the
  // catalog's credits; a promotion is an operator's grant (`admin credits grant`), never an invoice's.
  const paid = paidBeforeTax(invoice);
  const credits = creditsForPayment(plan ? plan.aiCreditsMicroUSD : topup!.priceMicroUSD, paid, price);
  if (credits <= 0) return `ignored: ${paid} cents paid before tax buys no credits`;
  const operationId = `stripe:invoice:${invoice.id}`;
  if (plan) {
    const r = await setPlan(d.meter, billing, principalId, plan.id, operationId, 'stripe-webhook', invoice.amount_paid, credits);
    return r.applied ? `plan ${plan.id}: credits granted ${r.grant.microUSD}` : `plan ${plan.id}: granted before`;
  }
  const t = topup!;
  if (t.scope === 'storage') {
    const now = new Date();
    const expires = new Date(now);
    expires.setUTCMonth(expires.getUTCMonth() + (t.validityMonths ?? 12));
    const applied = await d.billing.grantStorage({
      operationId,
      principalId,
      microUSD: credits,
      grantedAt: now.toISOString(),
      expiresAt: expires.toISOString(),
    });
    return applied ? `storage credits granted: ${credits}` : 'storage credits granted before';
  }
  const r = await grantCredits(d.meter, principalId, credits, operationId, 'stripe-webhook', invoice.amount_paid);
  return r.applied ? `credits granted: ${credits}` : 'credits granted before';
}

/**
 * The invoice a charge paid: on the charge itself where the event's API version still carries it, else
 * asked of Stripe by the charge's payment intent (newer versions moved it to invoice payments).
 */
async function invoiceOfCharge(d: BillingDeps, charge: { invoice?: unknown; payment_intent?: unknown }): Promise<string | null> {
  const own = charge.invoice;
  if (typeof own === 'string') return own;
  if (own && typeof (own as { id?: unknown }).id === 'string') return (own as { id: string }).id;
  const pi = typeof charge.payment_intent === 'string' ? charge.payment_intent : (charge.payment_intent as { id?: string } | null)?.id;
  if (!pi) return null;
  const client = d.stripe!.client;
  const list = await stripeCall(d.log, 'invoicePayments.list', () =>
    client.invoicePayments.list({ payment: { type: 'payment_intent', payment_intent: pi }, limit: 1 }),
  );
  const invoice = list.data[0]?.invoice;
  return typeof invoice === 'string' ? invoice : (invoice?.id ?? null);
}

/** Takes back `share` (0..1) of what an invoice granted, as the claim `claimKey`, once per event. */
async function takeBack(
  d: BillingDeps,
  event: Stripe.Event,
  invoiceId: string | null,
  claimKey: string,
  share: (g: { microUSD: number; paidCents?: number }) => number,
): Promise<string> {
  if (!invoiceId) return 'ignored: the charge paid no invoice';
  const grant = await d.meter.grantOf(`stripe:invoice:${invoiceId}`);
  if (!grant) return `ignored: invoice ${invoiceId} granted no credits`;
  const ratio = Math.min(1, Math.max(0, share(grant)));
  const target = Math.floor(grant.microUSD * ratio);
  const r = await d.meter.clawback({
    operationId: `stripe:clawback:${event.id}`,
    principalId: grant.principalId,
    claimKey: `${invoiceId}:${claimKey}`,
    targetMicroUSD: target,
    source: 'stripe-webhook',
  });
  return `credits taken back: ${r.takenMicroUSD} (already spent, left: ${r.waivedMicroUSD})`;
}

async function chargeRefunded(d: BillingDeps, event: Stripe.Event, charge: Stripe.Charge): Promise<string> {
  // amount_refunded is the charge's running total: the claim "refunds" settles up to its share.
  const invoice = await invoiceOfCharge(d, charge);
  return takeBack(d, event, invoice, `refund:${charge.id}`, () => (charge.amount > 0 ? charge.amount_refunded / charge.amount : 0));
}

async function disputeCreated(d: BillingDeps, event: Stripe.Event, dispute: Stripe.Dispute): Promise<string> {
  const charge =
    typeof dispute.charge === 'string'
      ? { payment_intent: dispute.payment_intent }
      : (dispute.charge as unknown as { invoice?: unknown; payment_intent?: unknown });
  const invoice = await invoiceOfCharge(d, charge);
  // A dispute's amount against what the invoice was paid (recorded with its grant); all of it if unknown.
  return takeBack(d, event, invoice, `dispute:${dispute.id}`, (g) => (g.paidCents && g.paidCents > 0 ? dispute.amount / g.paidCents : 1));
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
    case 'charge.refunded':
      return chargeRefunded(d, event, event.data.object);
    case 'charge.dispute.created':
      return disputeCreated(d, event, event.data.object);
    default:
      return `ignored: ${event.type} is not handled`;
  }
}
