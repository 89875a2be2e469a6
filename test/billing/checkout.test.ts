/**
 * Buying, as a person in a browser session, over a real redis-server and stripe-mock: the public catalog;
 * a checkout session for a plan and for a top-up, idempotent on requestId (the same id answers the same
 * session, another sku under it is refused); non-purchasable, unknown and disabled skus refused before
 * Stripe is asked; a PAT refused on checkout and portal (403); the customer portal; and a plan bought
 * through checkout granting its credits only with the paid invoice, never with the checkout itself.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { Browser } from '../helpers/browser.js';
import { configRoot, editFile } from '../helpers/gateway.js';
import { deliver, event, startStripeMock, type StripeMock } from '../helpers/stripe-mock.js';

describe('billing catalog, checkout and portal (session, stripe-mock)', () => {
  let w: World;
  let stripe: StripeMock;
  let n = 0;
  const person = async () => {
    const p = await w.gw.principal();
    const b = new Browser(w.gw);
    await b.seedSession(p.id);
    return { p, b };
  };
  const requestId = () => `req-${process.pid}-${n++}`;

  before(async () => {
    stripe = await startStripeMock({ record: true });
    w = await startWorld({ env: stripe.env });
  });
  after(async () => {
    await w.stop();
    await stripe.stop();
  });

  it('serves the catalog publicly: plans, rates, top-ups, listed-only credit tiers, purchasable per item', async () => {
    const res = await fetch(`${w.gw.apiUrl}/v1/billing/catalog`);
    expect(res.status).to.equal(200);
    const c = (await res.json()) as any;
    expect(c).to.deep.include({ currency: 'USD', checkoutEnabled: true, taxBehavior: 'exclusive' });
    expect(c.rates).to.deep.include({ inputPerMTok: 900000, cachedInputPerMTok: 225000, outputPerMTok: 4500000 });
    expect(c.plans.map((p: any) => [p.sku, p.priceMicroUSD, p.aiCreditsMicroUSD, p.purchasable])).to.deep.equal([
      ['pro', 20000000, 12000000, true],
      ['team', 150000000, 60000000, true],
      ['max', 100000000, 60000000, true],
      ['ultra', 200000000, 120000000, true],
    ]);
    expect(c.topups.map((t: any) => [t.sku, t.purchasable])).to.deep.equal([
      ['ai-credits-25', true],
      ['storage-credits-25', true],
    ]);
    expect(c.topups[1].validityMonths).to.equal(12);
    expect(c.creditTiers.map((t: any) => [t.sku, t.purchasable])).to.deep.equal([
      ['credits-50', false],
      ['credits-100', false],
      ['credits-500', false],
      ['credits-1000', false],
    ]);
  });

  it('creates a checkout session for a plan and for a top-up, and answers the same session for the same requestId', async () => {
    const { b } = await person();
    const id = requestId();
    const plan = await b.post('api', '/v1/billing/checkout', { sku: 'pro', requestId: id });
    expect(plan.status).to.equal(200);
    expect(plan.body).to.deep.include({ sku: 'pro', requestId: id });
    expect(plan.body.url).to.match(/^https:\/\/checkout\.stripe\.com\//);
    // stripe-mock answers every create with a fresh session id: the same id back proves the gateway's own record.
    const again = await b.post('api', '/v1/billing/checkout', { sku: 'pro', requestId: id });
    expect(again.body).to.deep.equal(plan.body);
    const other = await b.post('api', '/v1/billing/checkout', { sku: 'ultra', requestId: id });
    expect(other.status).to.equal(409);
    expect(other.body.error.code).to.equal('request-id-reused');
    const topup = await b.post('api', '/v1/billing/checkout', { sku: 'ai-credits-25', requestId: requestId() });
    expect(topup.status).to.equal(200);
    expect(topup.body.sessionId).to.not.equal(plan.body.sessionId);
  });

  it('puts the principal and {principalId, sku, requestId} on every session and on what it leads to; USD, tax-exclusive', async () => {
    const { p, b } = await person();
    const creates = () => stripe.requests().filter((r) => r.method === 'POST' && r.path === '/v1/checkout/sessions');
    const before = creates().length;
    const planId = requestId();
    const topupId = requestId();
    await b.post('api', '/v1/billing/checkout', { sku: 'team', requestId: planId });
    await b.post('api', '/v1/billing/checkout', { sku: 'storage-credits-25', requestId: topupId });
    await b.post('api', '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] });
    const [plan, topup, setup] = creates().slice(before);
    const customer = (await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/verification`)).body.customer;
    for (const [form, sku, carrier] of [
      [plan!.form, 'team', 'subscription_data'],
      [topup!.form, 'storage-credits-25', 'payment_intent_data'],
      [setup!.form, 'card-verification', 'setup_intent_data'],
    ] as const) {
      expect(form).to.deep.include({ client_reference_id: p.id, customer, 'metadata[principalId]': p.id, 'metadata[sku]': sku });
      expect(form[`${carrier}[metadata][principalId]`]).to.equal(p.id);
      expect(form[`${carrier}[metadata][sku]`]).to.equal(sku);
      expect(form[`${carrier}[metadata][requestId]`]).to.equal(form['metadata[requestId]']);
    }
    expect(plan!.form).to.deep.include({
      mode: 'subscription',
      'metadata[requestId]': planId,
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '15000',
      'line_items[0][price_data][tax_behavior]': 'exclusive',
      'line_items[0][price_data][recurring][interval]': 'month',
    });
    expect(topup!.form).to.deep.include({
      mode: 'payment',
      'metadata[requestId]': topupId,
      'line_items[0][price_data][unit_amount]': '2500',
      'line_items[0][price_data][tax_behavior]': 'exclusive',
    });
    // A one-time top-up asks for an invoice, carrying the metadata: its paid invoice is what grants.
    expect(topup!.form).to.deep.include({
      'invoice_creation[enabled]': 'true',
      'invoice_creation[invoice_data][metadata][principalId]': p.id,
      'invoice_creation[invoice_data][metadata][sku]': 'storage-credits-25',
    });
    expect(setup!.form).to.deep.include({ mode: 'setup', currency: 'usd' });
    expect(Object.keys(setup!.form).some((k) => k.startsWith('line_items'))).to.equal(false);
    // The same requestId asks Stripe nothing more.
    await b.post('api', '/v1/billing/checkout', { sku: 'team', requestId: planId });
    expect(creates().length).to.equal(before + 3);
  });

  it('asks Stripe Identity for a document with a matching selfie, bound to the principal', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const b = new Browser(w.gw);
    await b.seedSession(p.id);
    const before = stripe.requests().length;
    await b.post('api', '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] });
    const vs = stripe
      .requests()
      .slice(before)
      .find((r) => r.path === '/v1/identity/verification_sessions');
    expect(vs!.form).to.deep.include({
      type: 'document',
      'options[document][require_matching_selfie]': 'true',
      client_reference_id: p.id,
      'metadata[principalId]': p.id,
    });
  });

  it('refuses unknown and not-purchasable skus and bad bodies with clear 4xx', async () => {
    const { b } = await person();
    const cases: Array<[unknown, number, string]> = [
      [{ sku: 'credits-500', requestId: requestId() }, 409, 'sku-not-purchasable'],
      [{ sku: 'gold', requestId: requestId() }, 404, 'unknown-sku'],
      [{ sku: 'pro' }, 400, 'invalid-request'],
      [{ sku: 'pro', requestId: 'has spaces' }, 400, 'invalid-request'],
      [{ sku: 'pro', requestId: requestId(), coupon: 'FREE' }, 400, 'invalid-request'],
    ];
    for (const [body, status, code] of cases) {
      const r = await b.post('api', '/v1/billing/checkout', body);
      expect(r.status, JSON.stringify(body)).to.equal(status);
      expect(r.body.error.code).to.equal(code);
    }
    const text = await b.post('api', '/v1/billing/checkout', 'not json', { 'content-type': 'text/plain' });
    expect(text.status).to.equal(415);
  });

  it('refuses a PAT on checkout and portal with 403 pat-not-accepted, and no credentials with 401', async () => {
    const p = await w.gw.principal();
    for (const path of ['/v1/billing/checkout', '/v1/billing/portal']) {
      const res = await fetch(`${w.gw.apiUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${p.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ sku: 'pro', requestId: requestId() }),
      });
      expect(res.status, path).to.equal(403);
      expect(((await res.json()) as any).error.code).to.equal('pat-not-accepted');
      const none = await fetch(`${w.gw.apiUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(none.status, path).to.equal(401);
    }
  });

  it('serves research status, verification and applications to a browser session as well as to a PAT', async () => {
    const { p, b } = await person();
    const status = await b.get('api', '/v1/research/status');
    expect(status.status).to.equal(200);
    expect(status.body).to.deep.include({ status: 'pending', reason: 'verification-required' });
    const start = await b.post('api', '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] });
    expect(start.body.kind).to.equal('card');
    expect((await b.get('api', '/v1/research/ekyc/status')).body.state).to.equal('pending');
    const app = await b.post('api', '/v1/research/applications', {
      verificationMode: 'card',
      policyVersion: '2026-11',
      consent: { acceptableUse: true, localExecutionBoundary: true },
      authorizedResearch: { authorization: 'owned', targets: [{ kind: 'domain', identifier: 'acme.example' }] },
      purpose: 'review the code of our own web application',
      scope: { id: 'acme-web', tasks: ['code-review'] },
    });
    expect(app.status).to.equal(202);
    const listed = await w.gw.admin('GET', '/applications?status=submitted');
    expect(listed.body.data.find((a: any) => a.id === app.body.id).principalId).to.equal(p.id);
    // A cookie POST from another site is refused before anything is done.
    const foreign = new Browser(w.gw, 'https://evil.example');
    foreign.cookie = b.cookie;
    expect((await foreign.post('api', '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] })).status).to.equal(403);
  });

  it("opens the customer portal for the session's principal", async () => {
    const { p, b } = await person();
    const res = await b.post('api', '/v1/billing/portal');
    expect(res.status).to.equal(200);
    expect(res.body.url)
      .to.be.a('string')
      .and.match(/^https:\/\//);
    const v = await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/verification`);
    expect(v.body.customer).to.match(/^cus_/);
  });

  it('grants a plan bought through checkout only with its paid invoice, once for five deliveries', async () => {
    const { p, b } = await person();
    const id = requestId();
    const checkout = await b.post('api', '/v1/billing/checkout', { sku: 'pro', requestId: id });
    const customer = (await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/verification`)).body.customer;
    // The person returns to the success URL and Stripe reports the completed checkout: no credits yet.
    await deliver(
      w.gw.apiUrl,
      event('checkout.session.completed', {
        id: checkout.body.sessionId,
        object: 'checkout.session',
        mode: 'subscription',
        status: 'complete',
        payment_status: 'paid',
        client_reference_id: p.id,
        customer,
        metadata: { principalId: p.id, sku: 'pro', requestId: id },
      }),
    );
    const before = await b.get('api', '/v1/billing/status');
    expect(before.body.balances[0].grantedMicroUSD).to.equal(0);
    const paid = event('invoice.paid', {
      id: `in_${id}`,
      object: 'invoice',
      status: 'paid',
      customer,
      currency: 'usd',
      amount_paid: 2000,
      billing_reason: 'subscription_create',
      lines: { object: 'list', data: [{ id: `il_${id}`, object: 'line_item', amount: 2000, quantity: 1, metadata: {} }] },
      metadata: {},
      parent: { type: 'subscription_details', subscription_details: { metadata: { principalId: p.id, sku: 'pro', requestId: id } } },
    });
    for (let i = 0; i < 5; i++) expect((await deliver(w.gw.apiUrl, paid)).status).to.equal(200);
    const after = await b.get('api', '/v1/billing/status');
    expect(after.body.plan).to.equal('pro');
    expect(after.body.balances[0]).to.deep.include({ grantedMicroUSD: 12_000_000, availableMicroUSD: 12_000_000 });
  });
});

describe('checkout disabled in the catalog', () => {
  it('lists nothing as purchasable and refuses checkout with 409 checkout-disabled', async () => {
    const stripe = await startStripeMock();
    const root = configRoot();
    editFile(root, 'catalog/billing.yaml', (t) => t.replace('checkoutEnabled: true', 'checkoutEnabled: false'));
    const w = await startWorld({ env: stripe.env, root });
    try {
      const c = (await (await fetch(`${w.gw.apiUrl}/v1/billing/catalog`)).json()) as any;
      expect(c.checkoutEnabled).to.equal(false);
      expect(c.plans.some((x: any) => x.purchasable)).to.equal(false);
      const p = await w.gw.principal();
      const b = new Browser(w.gw);
      await b.seedSession(p.id);
      const r = await b.post('api', '/v1/billing/checkout', { sku: 'pro', requestId: 'r1' });
      expect(r.status).to.equal(409);
      expect(r.body.error.code).to.equal('checkout-disabled');
    } finally {
      await w.stop();
      await stripe.stop();
    }
  });
});
