/**
 * The verification ladder as a principal walks it, over a real redis-server, the recording upstream and a
 * real stripe-mock, with webhook events signed by the `stripe` package: pending -> card registered at
 * Stripe -> eligible -> a red-team call admitted; a prepaid card refused until a credit card comes; identity
 * refusals recorded; research status correct at each step, its trust projection re-stamped on every read.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway } from '../helpers/gateway.js';
import { RedisStore } from '../../src/store/redis.js';
import { deliver, event, startStripeMock, type StripeMock } from '../helpers/stripe-mock.js';
import { until } from '../helpers/wait.js';

const RED = { model: 'red-whitehacker-a', max_tokens: 2048, messages: [{ role: 'user', content: 'triage this' }] };

/** A setup intent as Stripe sends it with its payment method expanded. */
function setupIntent(principalId: string, funding: string, pm = `pm_${funding}_${Date.now()}`) {
  return {
    id: `seti_${Date.now()}`,
    object: 'setup_intent',
    status: 'succeeded',
    customer: null,
    metadata: { principalId, sku: 'card-verification', requestId: 'r1' },
    payment_method: { id: pm, object: 'payment_method', type: 'card', card: { brand: 'visa', funding, last4: '4242' } },
  };
}

describe('research status and the verification ladder (redis, stripe-mock, signed webhooks)', () => {
  let w: World;
  let stripe: StripeMock;
  const get = async (token: string, path: string) => {
    const res = await fetch(`${w.gw.apiUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  const post = async (token: string, path: string, body: unknown) => {
    const res = await fetch(`${w.gw.apiUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    stripe = await startStripeMock();
    w = await startWorld({ env: stripe.env });
  });
  after(async () => {
    await w.stop();
    await stripe.stop();
  });
  beforeEach(() => w.upstream.reset());

  it('walks a fresh principal from pending to a card verified at Stripe to an admitted red-team call', async () => {
    const p = await w.gw.principal();
    const fresh = await get(p.token, '/v1/research/status');
    expect(fresh.status).to.equal(200);
    expect(fresh.body).to.deep.include({ status: 'pending', reason: 'verification-required', scopes: [] });
    expect(fresh.body.freeTier).to.deep.include({ unit: 'requests', perDay: 1000, used: 0, remaining: 1000 });
    expect(fresh.body.trust).to.deep.include({ rung: null, level: null, evidence: null, verifiedAt: null, expiresAt: null });
    expect(fresh.body.trust.screening.status).to.equal('not-required');
    expect((await w.gw.chat(p.token, RED)).body.error.code).to.equal('verification-required');

    // The agent asks for the URL; a person would complete the setup page. The card check is pending.
    const start = await post(p.token, '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] });
    expect(start.status).to.equal(200);
    expect(start.body.kind).to.equal('card');
    expect(start.body.url).to.match(/^https:\/\/checkout\.stripe\.com\//);
    expect(Object.keys(start.body).sort()).to.deep.equal(['expiresAt', 'kind', 'sessionId', 'url']);
    const pending = await get(p.token, '/v1/research/ekyc/status');
    expect(pending.body).to.deep.include({ state: 'pending', rung: null });
    expect(pending.body.checks.card).to.deep.include({ state: 'pending', evidenceRef: start.body.sessionId });

    // Stripe reports the completed setup session; its setup intent is retrieved from Stripe (stripe-mock's
    // fixture card is a credit card).
    const done = await deliver(
      w.gw.apiUrl,
      event('checkout.session.completed', {
        id: start.body.sessionId,
        object: 'checkout.session',
        mode: 'setup',
        status: 'complete',
        client_reference_id: p.id,
        customer: 'cus_ladder',
        metadata: { principalId: p.id, sku: 'card-verification', requestId: 'r1' },
        setup_intent: 'seti_123',
      }),
    );
    expect(done.status).to.equal(200);
    expect(done.body.outcome).to.equal('card verified: granted card');

    const eligible = await get(p.token, '/v1/research/status');
    expect(eligible.body).to.deep.include({ status: 'eligible', reason: null });
    expect(eligible.body.scopes).to.deep.equal([{ id: 'owned', status: 'approved', tasks: ['code-review'] }]);
    const trust = eligible.body.trust;
    expect(trust).to.deep.include({ rung: 'card', level: 'L1' });
    expect(trust.evidence).to.deep.include({ kind: 'card', source: 'card-webhook' });
    expect(trust.evidence.reference).to.match(/^pm_/);
    const days = (Date.parse(trust.expiresAt) - Date.parse(trust.verifiedAt)) / 86_400_000;
    expect(days).to.equal(365);
    const verified = await get(p.token, '/v1/research/ekyc/status');
    expect(verified.body).to.deep.include({ state: 'verified', rung: 'card', level: 'L1', reason: null });
    expect(verified.body.checks.card.state).to.equal('verified');

    const admitted = await w.gw.chat(p.token, RED);
    expect(admitted.status).to.equal(200);
    expect(admitted.body.billing).to.equal('free');
    expect(await w.upstream.requests()).to.have.length(1);
    expect((await get(p.token, '/v1/research/status')).body.freeTier).to.deep.include({ used: 1, remaining: 999 });
  });

  it('re-stamps the 60-second trust projection on every read', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const first = (await get(p.token, '/v1/research/status')).body.trust;
    expect(Date.parse(first.validUntil) - Date.parse(first.projectedAt)).to.equal(60_000);
    // The point is a later read: wait until the clock has moved past the first one's stamp.
    await until(() => Date.now() > Date.parse(first.projectedAt), { what: 'the clock to pass the first projection', everyMs: 1 });
    const second = (await get(p.token, '/v1/research/status')).body.trust;
    expect(Date.parse(second.projectedAt)).to.be.greaterThan(Date.parse(first.projectedAt));
    expect(Date.parse(second.validUntil) - Date.parse(second.projectedAt)).to.equal(60_000);
    expect(second.evidence).to.deep.include({ kind: 'operator-review', source: 'operator' });
  });

  it('refuses a prepaid card: unverified, research status and red calls say prepaid-card-not-accepted, until a credit card', async () => {
    const p = await w.gw.principal();
    const refused = await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(p.id, 'prepaid')));
    expect(refused.body.outcome).to.equal('card refused: prepaid');
    const status = (await get(p.token, '/v1/research/status')).body;
    expect(status).to.deep.include({ status: 'pending', reason: 'prepaid-card-not-accepted' });
    expect(status.trust.rung).to.equal(null);
    expect((await get(p.token, '/v1/research/ekyc/status')).body).to.deep.include({ state: 'refused', reason: 'prepaid-card-not-accepted' });
    const call = await w.gw.chat(p.token, RED);
    expect(call.status).to.equal(403);
    expect(call.body.error.code).to.equal('prepaid-card-not-accepted');
    expect(await w.upstream.requests()).to.have.length(0);

    const ok = await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(p.id, 'debit')));
    expect(ok.body.outcome).to.equal('card verified: granted card');
    expect((await get(p.token, '/v1/research/status')).body).to.deep.include({ status: 'eligible', reason: null });
    expect((await w.gw.chat(p.token, RED)).status).to.equal(200);
  });

  it('keeps a verified card when a prepaid card arrives later, and in the other order', async () => {
    const a = await w.gw.principal();
    const t = Math.floor(Date.now() / 1000);
    await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(a.id, 'credit'), { created: t - 10 }));
    await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(a.id, 'prepaid'), { created: t }));
    const b = await w.gw.principal();
    await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(b.id, 'prepaid'), { created: t }));
    await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(b.id, 'credit'), { created: t - 10 }));
    for (const p of [a, b]) {
      expect((await get(p.token, '/v1/research/status')).body).to.deep.include({ status: 'eligible', reason: null });
      expect((await w.gw.chat(p.token, RED)).status).to.equal(200);
    }
  });

  it('grants identity (L2) from a verified Stripe Identity session, and never lowers it for a late card event', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const vs = (status: string, extra: Record<string, unknown> = {}) => ({
      id: 'vs_test_1',
      object: 'identity.verification_session',
      status,
      client_reference_id: p.id,
      metadata: { principalId: p.id },
      last_error: null,
      ...extra,
    });
    const t = Math.floor(Date.now() / 1000);
    const needsInput = await deliver(
      w.gw.apiUrl,
      event('identity.verification_session.requires_input', vs('requires_input', { last_error: { code: 'selfie_face_mismatch', reason: 'x' } }), {
        created: t - 5,
      }),
    );
    expect(needsInput.body.outcome).to.equal('identity refused: selfie_face_mismatch');
    let ekyc = (await get(p.token, '/v1/research/ekyc/status')).body;
    expect(ekyc.checks.identity).to.deep.include({ state: 'refused', reason: 'selfie_face_mismatch', evidenceRef: 'vs_test_1' });
    expect(ekyc).to.deep.include({ state: 'verified', rung: 'card' });

    const ok = await deliver(w.gw.apiUrl, event('identity.verification_session.verified', vs('verified'), { created: t }));
    expect(ok.body.outcome).to.equal('identity verified: granted identity');
    await deliver(w.gw.apiUrl, event('setup_intent.succeeded', setupIntent(p.id, 'credit'), { created: t - 100 }));
    const trust = (await get(p.token, '/v1/research/status')).body.trust;
    expect(trust).to.deep.include({ rung: 'identity', level: 'L2' });
    expect(trust.evidence).to.deep.equal({ kind: 'document-and-selfie', reference: 'vs_test_1', source: 'identity-webhook' });
    ekyc = (await get(p.token, '/v1/research/ekyc/status')).body;
    expect(ekyc.checks.identity).to.deep.include({ state: 'verified', reason: null, evidenceRef: 'vs_test_1' });
    // The evidence stays with Stripe: nothing but the reference is kept.
    expect(JSON.stringify(ekyc)).to.not.match(/document_|selfie_face|dob|address/i);
  });

  it('starts an identity session (not a second card) once the card is verified; stripe-mock answers such a session without a URL', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const start = await post(p.token, '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] });
    // stripe-mock's fixture identity session has `url: null`; a session without a URL is no use to a person.
    expect(start.status).to.equal(502);
    expect(start.body.error.code).to.equal('payment-processor-error');
    expect(start.body.error.message).to.match(/no URL/);
  });

  it('refuses bad ekyc bodies with the field named, before Stripe is asked', async () => {
    const p = await w.gw.principal();
    const cases: Array<[unknown, RegExp]> = [
      [{ scopeId: 'owned' }, /missing field "tasks"/],
      [{ scopeId: 'owned', tasks: ['code-review'], extra: 1 }, /unknown field "extra"/],
      [{ scopeId: 'Owned!', tasks: ['code-review'] }, /scopeId/],
      [{ scopeId: 'owned', tasks: ['cooking'] }, /unknown task "cooking"/],
      [{ scopeId: 'owned', tasks: [] }, /tasks/],
    ];
    for (const [body, message] of cases) {
      const r = await post(p.token, '/v1/research/ekyc/start', body);
      expect(r.status, JSON.stringify(body)).to.equal(400);
      expect(r.body.error.code).to.equal('invalid-request');
      expect(r.body.error.message).to.match(message);
    }
    expect((await get(p.token, '/v1/research/ekyc/status')).body.state).to.equal('none');
  });

  it("says verification-expired once the rung's 365 days are over, and starts a card check again", async () => {
    const p = await w.gw.principal({ rung: 'card' });
    const raw = await RedisStore.connect({ url: w.redis.url });
    try {
      const held = (await raw.getPrincipal(p.id))!.rung!;
      await raw.setRung(p.id, { ...held, expiresAt: new Date(Date.now() - 1000).toISOString() }, null);
    } finally {
      await raw.close();
    }
    const status = (await get(p.token, '/v1/research/status')).body;
    expect(status).to.deep.include({ status: 'pending', reason: 'verification-expired' });
    expect(status.trust.rung).to.equal(null);
    expect((await get(p.token, '/v1/research/ekyc/status')).body).to.deep.include({ state: 'expired', rung: 'card' });
    expect((await w.gw.chat(p.token, RED)).body.error.code).to.equal('verification-required');
    expect((await post(p.token, '/v1/research/ekyc/start', { scopeId: 'owned', tasks: ['code-review'] })).body.kind).to.equal('card');
  });

  it('answers 502 when Stripe cannot be reached to read the card, records nothing, and applies the retried event', async () => {
    const { freePort } = await import('../helpers/ports.js');
    const dead = await startTestGateway({ redisUrl: w.redis.url, env: { ...stripe.env, STRIPE_API_BASE: `http://127.0.0.1:${await freePort()}` } });
    try {
      const p = await w.gw.principal();
      const evt = event('checkout.session.completed', {
        id: 'cs_dead',
        object: 'checkout.session',
        mode: 'setup',
        client_reference_id: p.id,
        customer: null,
        metadata: { principalId: p.id },
        setup_intent: 'seti_123',
      });
      const failed = await deliver(dead.apiUrl, evt);
      expect(failed.status).to.equal(502);
      expect(failed.body.error.code).to.equal('payment-processor-error');
      expect((await get(p.token, '/v1/research/status')).body.reason).to.equal('verification-required');
      // Stripe retries the same event; an instance that reaches Stripe applies it.
      expect((await deliver(w.gw.apiUrl, evt)).body.outcome).to.equal('card verified: granted card');
    } finally {
      await dead.close();
    }
  });

  it('answers 401 without a token on every research route', async () => {
    for (const [method, path] of [
      ['GET', '/v1/research/status'],
      ['GET', '/v1/research/ekyc/status'],
      ['POST', '/v1/research/ekyc/start'],
      ['POST', '/v1/research/applications'],
    ] as const) {
      const res = await fetch(`${w.gw.apiUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(res.status, path).to.equal(401);
      expect(((await res.json()) as any).error.code).to.equal('unauthenticated');
    }
  });
});
