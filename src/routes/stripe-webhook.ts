/**
 * POST /v1/webhooks/stripe (API host): Stripe's events. The signature is checked on the raw bytes with
 * STRIPE_WEBHOOK_SECRET and a 300-second tolerance before anything is parsed or acted on: the `stripe`
 * package's constructEvent checks the signature and refuses a timestamp older than the tolerance, and the
 * signed timestamp must not be further ahead of this gateway's clock than the tolerance either (the
 * package lets any future time through, so an event signed for next year was accepted, to be replayed
 * all year). A missing, wrong, stale or future signature answers 400 and changes nothing.
 *
 * An event already applied (by any instance) answers 200 without being applied again; a new one is applied
 * (src/billing/webhooks.ts) and then recorded by its id. A failure answers 5xx only when a retry can help
 * (the processor or the store could not be reached, the principal is not known yet); Stripe retries those.
 */
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import type Stripe from 'stripe';
import { GatewayError } from '../errors.js';
import type { BillingDeps } from '../billing/deps.js';
import { applyEvent } from '../billing/webhooks.js';

/** Stripe's default: an event signed more than five minutes ago is refused as a possible replay. */
const TOLERANCE_SECONDS = 300;

export function stripeWebhook(d: BillingDeps) {
  return async function stripeWebhook(ctx: Context): Promise<void> {
    const processor = d.stripe;
    if (!processor || !processor.webhookSecret) throw new GatewayError('billing-not-configured');
    let raw: Buffer;
    try {
      raw = await getRawBody(ctx.req, { limit: d.holder.current.gateway.limits.bodyBytes, length: ctx.get('content-length') || undefined });
    } catch (err) {
      if ((err as { type?: string }).type === 'entity.too.large') throw new GatewayError('payload-too-large');
      throw new GatewayError('invalid-request', 'the request body could not be read');
    }
    const signature = ctx.get('stripe-signature');
    if (!signature) throw new GatewayError('webhook-signature-invalid', 'the stripe-signature header is missing');
    let event: Stripe.Event;
    try {
      event = processor.client.webhooks.constructEvent(raw, signature, processor.webhookSecret, TOLERANCE_SECONDS);
    } catch {
      throw new GatewayError('webhook-signature-invalid');
    }
    // The signature covers `t`, so it is the sender's; only its distance from our clock is left to check.
    const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(signature)?.[1]);
    if (!(signedAt * 1000 <= Date.now() + TOLERANCE_SECONDS * 1000)) {
      throw new GatewayError('webhook-signature-invalid', `the event is signed for a time more than ${TOLERANCE_SECONDS} s ahead of this gateway's clock`);
    }
    if (await d.billing.eventApplied(event.id)) {
      ctx.body = { received: true, duplicate: true };
      return;
    }
    const outcome = await applyEvent(d, event);
    await d.billing.markEventApplied(event.id, outcome);
    d.log.info('stripe.event_applied', { eventId: event.id, type: event.type, outcome });
    ctx.body = { received: true, outcome };
  };
}
