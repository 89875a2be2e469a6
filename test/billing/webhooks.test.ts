/**
 * The Stripe webhook's rules, over a real redis-server and stripe-mock, with events signed by the `stripe`
 * package: unsigned, wrongly signed and stale events change nothing; a paid invoice delivered five times
 * grants its plan's credits once; two events about one payment grant once; an invoice that arrives before
 * the checkout that led to it is applied; credits come only from a paid invoice whose lines match the
 * catalog (never from a completed checkout, a $0 invoice or a proration); refunds and disputes take back
 * their share, once per event, never below what was spent; an event about a principal the gateway does
 * not hold is retried.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { deliver, event, startStripeMock, WEBHOOK_SECRET, type StripeMock } from '../helpers/stripe-mock.js';
import { freePort } from '../helpers/ports.js';
import { createLogger } from '../../src/log.js';

const PRO_CREDITS = 12_000_000;

function paidInvoice(principalId: string, id = `in_${Date.now()}_${Math.random().toString(36).slice(2)}`) {
  return {
    id,
    object: 'invoice',
    status: 'paid',
    customer: 'cus_unknown_here',
    amount_paid: 2000,
    currency: 'usd',
    billing_reason: 'subscription_create',
    lines: { object: 'list', data: [{ id: `il_${id}`, object: 'line_item', amount: 2000, currency: 'usd', quantity: 1, metadata: {} }] },
    metadata: {},
    parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_1', metadata: { principalId, sku: 'pro', requestId: 'buy-1' } } },
  };
}

describe('stripe webhooks (redis, stripe-mock, signed events)', () => {
  let w: World;
  let stripe: StripeMock;
  const billing = async (id: string) => (await w.gw.admin('GET', `/principals/${encodeURIComponent(id)}/billing`)).body;

  before(async () => {
    stripe = await startStripeMock();
    w = await startWorld({ env: stripe.env });
  });
  after(async () => {
    await w.stop();
    await stripe.stop();
  });

  it('refuses unsigned, wrongly signed, tampered and stale events with 400, changing nothing', async () => {
    const p = await w.gw.principal();
    const evt = event('invoice.paid', paidInvoice(p.id));
    const payload = JSON.stringify(evt);
    const unsigned = await deliver(w.gw.apiUrl, evt, { signature: null });
    const wrong = await deliver(w.gw.apiUrl, evt, { secret: 'whsec_someone_else' });
    const stale = await deliver(w.gw.apiUrl, evt, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    const garbage = await deliver(w.gw.apiUrl, evt, { signature: 't=1,v1=abc' });
    // A signature made for one body does not cover another.
    const { default: Stripe } = await import('stripe');
    const header = new Stripe('sk_x').webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const tampered = await deliver(w.gw.apiUrl, payload.replace('"pro"', '"ultra"'), { signature: header });
    for (const r of [unsigned, wrong, stale, garbage, tampered]) {
      expect(r.status).to.equal(400);
      expect(r.body.error.code).to.equal('webhook-signature-invalid');
    }
    expect((await billing(p.id)).plan).to.equal(null);
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(0);
    // The same event, properly signed, is then applied: it was never recorded as seen.
    const ok = await deliver(w.gw.apiUrl, evt);
    expect(ok.status).to.equal(200);
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(PRO_CREDITS);
  });

  it('refuses an event signed for a time ahead of the tolerance (a year, or 301 s), changing nothing', async () => {
    const p = await w.gw.principal();
    const evt = event('invoice.paid', paidInvoice(p.id));
    const now = Math.floor(Date.now() / 1000);
    for (const timestamp of [now + 365 * 86_400, now + 330]) {
      const r = await deliver(w.gw.apiUrl, evt, { timestamp });
      expect(r.status, String(timestamp - now)).to.equal(400);
      expect(r.body.error.code).to.equal('webhook-signature-invalid');
      expect(r.body.error.message).to.contain('ahead');
    }
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(0);
    // Within the tolerance either way, clocks that differ a little still agree.
    expect((await deliver(w.gw.apiUrl, evt, { timestamp: now + 60 })).status).to.equal(200);
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(PRO_CREDITS);
  });

  it("grants a plan's credits exactly once for five deliveries of its paid invoice, some at once", async () => {
    const p = await w.gw.principal();
    const evt = event('invoice.paid', paidInvoice(p.id));
    const first = await deliver(w.gw.apiUrl, evt);
    expect(first.body.outcome).to.equal(`plan pro: credits granted ${PRO_CREDITS}`);
    const rest = await Promise.all([1, 2, 3, 4].map(() => deliver(w.gw.apiUrl, evt)));
    for (const r of rest) expect(r).to.deep.equal({ status: 200, body: { received: true, duplicate: true } });
    const b = await billing(p.id);
    expect(b.plan).to.equal('pro');
    expect(b.balances[0]).to.deep.include({ grantedMicroUSD: PRO_CREDITS, availableMicroUSD: PRO_CREDITS });
  });

  it('grants once for two different events about one invoice, delivered concurrently', async () => {
    const p = await w.gw.principal();
    const inv = paidInvoice(p.id);
    const results = await Promise.all([deliver(w.gw.apiUrl, event('invoice.paid', inv)), deliver(w.gw.apiUrl, event('invoice.paid', inv))]);
    expect(results.map((r) => r.status)).to.deep.equal([200, 200]);
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(PRO_CREDITS);
    // The next period's invoice is a new invoice: its credits are granted.
    await deliver(w.gw.apiUrl, event('invoice.paid', paidInvoice(p.id)));
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(2 * PRO_CREDITS);
  });

  it('applies a paid invoice that arrives before its checkout session, and finds a later invoice by the customer', async () => {
    const p = await w.gw.principal();
    const customer = `cus_${Date.now()}`;
    const inv = { ...paidInvoice(p.id), customer };
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', inv))).status).to.equal(200);
    const session = {
      id: `cs_${Date.now()}`,
      object: 'checkout.session',
      mode: 'subscription',
      status: 'complete',
      payment_status: 'paid',
      client_reference_id: p.id,
      customer,
      metadata: { principalId: p.id, sku: 'pro', requestId: 'buy-1' },
    };
    const done = await deliver(w.gw.apiUrl, event('checkout.session.completed', session));
    expect(done.body.outcome).to.match(/subscription started/);
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(PRO_CREDITS);
    // An invoice with no metadata of ours is found through the customer the checkout linked.
    const bare = { ...paidInvoice(p.id), id: `in_bare_${Date.now()}`, customer, metadata: { sku: 'pro' }, parent: null, billing_reason: 'subscription_cycle' };
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', bare))).body.outcome).to.equal(`plan pro: credits granted ${PRO_CREDITS}`);
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(2 * PRO_CREDITS);
  });

  const topupInvoice = (principalId: string, sku: string, over: Record<string, unknown> = {}) => {
    const id = `in_topup_${sku}_${Date.now()}_${Math.random().toString(36).slice(2)}`;
    return {
      id,
      object: 'invoice',
      status: 'paid',
      customer: null,
      amount_paid: 2500,
      currency: 'usd',
      billing_reason: 'manual',
      lines: { object: 'list', data: [{ id: `il_${id}`, object: 'line_item', amount: 2500, currency: 'usd', quantity: 1, metadata: {} }] },
      metadata: { principalId, sku, requestId: `r-${sku}` },
      parent: null,
      ...over,
    };
  };

  it('grants a top-up with its paid invoice only, never with the completed checkout (AI credits to the balance, storage credits for 12 months)', async () => {
    const p = await w.gw.principal();
    const bare = (await (await fetch(`${w.gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${p.token}` } })).json()) as any;
    expect(bare.balances.map((b: any) => b.scope)).to.deep.equal(['ai']);
    const session = (sku: string, payment_status: string) => ({
      id: `cs_topup_${sku}_${Date.now()}`,
      object: 'checkout.session',
      mode: 'payment',
      status: 'complete',
      payment_status,
      client_reference_id: p.id,
      customer: null,
      metadata: { principalId: p.id, sku, requestId: `r-${sku}` },
    });
    // The checkout, paid, grants nothing: neither its completion nor its late settlement.
    const completed = await deliver(w.gw.apiUrl, event('checkout.session.completed', session('ai-credits-25', 'paid')));
    expect(completed.body.outcome).to.equal('payment received: credits come with its paid invoice');
    await deliver(w.gw.apiUrl, event('checkout.session.async_payment_succeeded', session('ai-credits-25', 'paid')));
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(0);
    // Its invoice does, once for both deliveries.
    const inv = topupInvoice(p.id, 'ai-credits-25');
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', inv))).body.outcome).to.equal('credits granted: 25000000');
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', inv))).body.outcome).to.equal('credits granted before');
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(25_000_000);

    const storage = await deliver(w.gw.apiUrl, event('invoice.paid', topupInvoice(p.id, 'storage-credits-25')));
    expect(storage.body.outcome).to.equal('storage credits granted: 25000000');
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(25_000_000);
    const own = (await (await fetch(`${w.gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${p.token}` } })).json()) as any;
    const row = own.balances.find((b: any) => b.scope === 'storage');
    expect(row).to.deep.include({ grantedMicroUSD: 25_000_000, spentMicroUSD: 0, reservedMicroUSD: 0, availableMicroUSD: 25_000_000 });
    const months = (Date.parse(row.nextExpiryAt) - Date.now()) / (30.44 * 86_400_000);
    expect(months).to.be.within(11.8, 12.2);
  });

  it('grants nothing for a $0 invoice, a proration, or lines that do not come to the catalog price', async () => {
    const p = await w.gw.principal();
    const zero = await deliver(w.gw.apiUrl, event('invoice.paid', { ...paidInvoice(p.id), amount_paid: 0 }));
    expect(zero.body.outcome).to.equal('ignored: nothing was paid (amount_paid is 0)');
    const proration = await deliver(w.gw.apiUrl, event('invoice.paid', { ...paidInvoice(p.id), billing_reason: 'subscription_update' }));
    expect(proration.body.outcome).to.equal('ignored: a subscription_update invoice pays for no period of plan pro');
    // Metadata naming the ultra plan (120 USD of credits) on an invoice whose lines charged 20 USD.
    const ultra = paidInvoice(p.id);
    ultra.parent.subscription_details.metadata.sku = 'ultra';
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', ultra))).body.outcome).to.equal(
      "ignored: the invoice's lines come to 2000 cents, the catalog's ultra costs 20000",
    );
    const cheapTopup = await deliver(
      w.gw.apiUrl,
      event(
        'invoice.paid',
        topupInvoice(p.id, 'ai-credits-25', { lines: { object: 'list', data: [{ id: 'il_x', object: 'line_item', amount: 100, quantity: 1, metadata: {} }] } }),
      ),
    );
    expect(cheapTopup.body.outcome).to.match(/^ignored: the invoice's lines come to 100 cents/);
    const b = await billing(p.id);
    expect(b.plan).to.equal(null);
    expect(b.balances[0].grantedMicroUSD).to.equal(0);
  });

  it('grants no more than was paid: the catalog credits in proportion to amount_paid before tax, none for another currency; a refund takes back what was granted', async () => {
    // A top-up of 25 USD (25,000,000 micro-USD) paid 1 cent, a coupon covering the rest.
    const p = await w.gw.principal();
    const cent = topupInvoice(p.id, 'ai-credits-25', {
      amount_paid: 1,
      total: 1,
      total_excluding_tax: 1,
      total_discount_amounts: [{ amount: 2499, discount: 'di_1' }],
    });
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', cent))).body.outcome).to.equal('credits granted: 10000');
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(10_000);
    // Its whole 1-cent charge refunded: exactly what it granted is taken back.
    const refund = {
      id: `ch_${cent.id}`,
      object: 'charge',
      amount: 1,
      amount_refunded: 1,
      refunded: true,
      customer: null,
      invoice: cent.id,
      payment_intent: `pi_${cent.id}`,
      metadata: {},
    };
    expect((await deliver(w.gw.apiUrl, event('charge.refunded', refund))).body.outcome).to.equal('credits taken back: 10000 (already spent, left: 0)');
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(0);

    // The same invoice in euros: the catalog is priced in USD, nothing is granted.
    const q = await w.gw.principal();
    const eur = topupInvoice(q.id, 'ai-credits-25', { currency: 'eur' });
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', eur))).body.outcome).to.equal(
      'ignored: the invoice is in "eur", the catalog\'s prices are in USD',
    );
    expect((await billing(q.id)).balances[0].grantedMicroUSD).to.equal(0);

    // The pro plan (20 USD, 12 USD of credits) at half price plus 10 % tax: 1,100 cents paid, 1,000 before tax.
    const r = await w.gw.principal();
    const half = { ...paidInvoice(r.id), amount_paid: 1100, total: 1100, total_excluding_tax: 1000 };
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', half))).body.outcome).to.equal('plan pro: credits granted 6000000');
    expect(await billing(r.id)).to.deep.include({ plan: 'pro' });
    expect((await billing(r.id)).balances[0].grantedMicroUSD).to.equal(6_000_000);
    // Full price plus tax grants the catalog's credits, no more.
    const s = await w.gw.principal();
    const taxed = { ...paidInvoice(s.id), amount_paid: 2200, total: 2200, total_excluding_tax: 2000 };
    expect((await deliver(w.gw.apiUrl, event('invoice.paid', taxed))).body.outcome).to.equal(`plan pro: credits granted ${PRO_CREDITS}`);
  });

  it("takes back a refund's and a dispute's share of the credits, once per event, never below what was spent", async () => {
    const p = await w.gw.principal();
    const inv = topupInvoice(p.id, 'ai-credits-25');
    await deliver(w.gw.apiUrl, event('invoice.paid', inv));
    // Events of API versions that still carry the charge's invoice.
    const charge = (amount_refunded: number) => ({
      id: `ch_${inv.id}`,
      object: 'charge',
      amount: 2500,
      amount_refunded,
      refunded: amount_refunded === 2500,
      customer: null,
      invoice: inv.id,
      payment_intent: `pi_${inv.id}`,
      metadata: {},
    });
    const partial = event('charge.refunded', charge(1000));
    expect((await deliver(w.gw.apiUrl, partial)).body.outcome).to.equal('credits taken back: 10000000 (already spent, left: 0)');
    expect((await deliver(w.gw.apiUrl, partial)).body).to.deep.equal({ received: true, duplicate: true });
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(15_000_000);
    // The refund grows to the whole charge: only the rest is taken.
    expect((await deliver(w.gw.apiUrl, event('charge.refunded', charge(2500)))).body.outcome).to.equal('credits taken back: 15000000 (already spent, left: 0)');
    expect((await billing(p.id)).balances[0]).to.deep.include({ grantedMicroUSD: 0, availableMicroUSD: 0 });

    // A dispute over half of a plan's invoice.
    const q = await w.gw.principal();
    const planInv = paidInvoice(q.id);
    await deliver(w.gw.apiUrl, event('invoice.paid', planInv));
    const dispute = {
      id: `dp_${planInv.id}`,
      object: 'dispute',
      amount: 1000,
      charge: { id: `ch_${planInv.id}`, object: 'charge', invoice: planInv.id },
      payment_intent: null,
      status: 'needs_response',
      reason: 'fraudulent',
    };
    expect((await deliver(w.gw.apiUrl, event('charge.dispute.created', dispute))).body.outcome).to.equal(
      'credits taken back: 6000000 (already spent, left: 0)',
    );
    expect((await billing(q.id)).balances[0].grantedMicroUSD).to.equal(6_000_000);
    // A charge that paid no invoice of ours changes nothing.
    const stray = await deliver(w.gw.apiUrl, event('charge.refunded', { ...charge(2500), id: 'ch_stray', invoice: 'in_not_ours' }));
    expect(stray.body.outcome).to.equal('ignored: invoice in_not_ours granted no credits');
  });

  it('finds the invoice of a charge through its payment intent where the event no longer carries it', async () => {
    // stripe-mock answers every invoice-payment lookup with its fixture, whose invoice id is "invoice".
    const p = await w.gw.principal();
    await deliver(w.gw.apiUrl, event('invoice.paid', topupInvoice(p.id, 'ai-credits-25', { id: 'invoice' })));
    const r = await deliver(
      w.gw.apiUrl,
      event('charge.refunded', {
        id: 'ch_new',
        object: 'charge',
        amount: 2500,
        amount_refunded: 2500,
        refunded: true,
        customer: null,
        payment_intent: 'pi_new',
        metadata: {},
      }),
    );
    expect(r.body.outcome).to.equal('credits taken back: 25000000 (already spent, left: 0)');
    expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(0);
  });

  it('answers 503 for an event about a principal the gateway does not hold, so Stripe retries it', async () => {
    const r = await deliver(w.gw.apiUrl, event('invoice.paid', paidInvoice('did:web:portcullis.localhost:tenant:nobody-here')));
    expect(r.status).to.equal(503);
    expect(r.body.error.code).to.equal('webhook-not-ready');
  });

  it('applies events about nobody of ours, and event types it does not handle, as ignored', async () => {
    const r1 = await deliver(w.gw.apiUrl, event('invoice.paid', { id: 'in_x', object: 'invoice', customer: 'cus_stranger', metadata: {}, parent: null }));
    expect(r1.body.outcome).to.equal('ignored: no principal of ours');
    const other = await deliver(
      w.gw.apiUrl,
      event('invoice.paid', { id: 'in_z', object: 'invoice', customer: 'cus_z', metadata: { principalId: 'someone-elses-user-42', sku: 'pro' }, parent: null }),
    );
    expect(other.body.outcome).to.equal('ignored: no principal of ours');
    const r2 = await deliver(w.gw.apiUrl, event('customer.created', { id: 'cus_y', object: 'customer' }));
    expect(r2.body.outcome).to.equal('ignored: customer.created is not handled');
  });

  it('an event applied on one gateway instance is not applied again on another sharing the store', async () => {
    const other: TestGateway = await startTestGateway({ redisUrl: w.redis.url, env: stripe.env });
    try {
      const p = await w.gw.principal();
      const evt = event('invoice.paid', paidInvoice(p.id));
      expect((await deliver(w.gw.apiUrl, evt)).body.outcome).to.match(/credits granted/);
      expect((await deliver(other.apiUrl, evt)).body).to.deep.equal({ received: true, duplicate: true });
      expect((await billing(p.id)).balances[0].grantedMicroUSD).to.equal(PRO_CREDITS);
    } finally {
      await other.close();
    }
  });
});

describe('stripe webhooks without Stripe configured', () => {
  it('answers 503 billing-not-configured, and the gateway serves everything else', async () => {
    const gw = await startTestGateway();
    try {
      const r = await deliver(gw.apiUrl, event('invoice.paid', paidInvoice('x')));
      expect(r.status).to.equal(503);
      expect(r.body.error.code).to.equal('billing-not-configured');
      const p = await gw.principal();
      const start = await fetch(`${gw.apiUrl}/v1/research/ekyc/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ scopeId: 'owned', tasks: ['code-review'] }),
      });
      expect(start.status).to.equal(503);
      expect(((await start.json()) as any).error.code).to.equal('billing-not-configured');
      const status = await fetch(`${gw.apiUrl}/v1/research/status`, { headers: { authorization: `Bearer ${p.token}` } });
      expect(status.status).to.equal(200);
      const catalog = (await (await fetch(`${gw.apiUrl}/v1/billing/catalog`)).json()) as any;
      expect(catalog.checkoutEnabled).to.equal(false);
      expect(catalog.plans.every((x: any) => x.purchasable === false)).to.equal(true);
    } finally {
      await gw.close();
    }
  });
});

describe('billing secrets stay out of logs and answers', () => {
  it('never writes the Stripe key, the webhook secret, a signature or a PAT to a log line or an error body', async () => {
    const stripe = await startStripeMock();
    const lines: string[] = [];
    const log = createLogger('debug', (l) => void lines.push(l));
    const dead = { ...stripe.env, STRIPE_API_BASE: `http://127.0.0.1:${await freePort()}` };
    const gw = await startTestGateway({ env: dead, log });
    const bodies: string[] = [];
    try {
      const p = await gw.principal();
      const start = await fetch(`${gw.apiUrl}/v1/research/ekyc/start`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ scopeId: 'owned', tasks: ['code-review'] }),
      });
      expect(start.status).to.equal(502);
      bodies.push(await start.text());
      const evt = event('checkout.session.completed', {
        id: 'cs_s',
        object: 'checkout.session',
        mode: 'setup',
        client_reference_id: p.id,
        metadata: { principalId: p.id },
        setup_intent: 'seti_123',
      });
      const wrong = await deliver(gw.apiUrl, evt, { secret: 'whsec_wrong_one' });
      bodies.push(JSON.stringify(wrong.body));
      const failed = await deliver(gw.apiUrl, evt);
      expect(failed.status).to.equal(502);
      bodies.push(JSON.stringify(failed.body));
      const text = lines.join('\n') + bodies.join('\n');
      expect(lines.some((l) => l.includes('stripe.call_failed'))).to.equal(true);
      for (const secret of [stripe.env['STRIPE_SECRET_KEY']!, WEBHOOK_SECRET, 'whsec_wrong_one', 'v1=', p.token]) expect(text).to.not.include(secret);
    } finally {
      await gw.close();
      await stripe.stop();
    }
  });
});
