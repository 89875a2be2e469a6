/**
 * Passkey sign-in end to end, with a software authenticator (a real ES256 key signing real clientDataJSON
 * and authenticatorData, CBOR attestation `none`) against the real @simplewebauthn/server checks: a person
 * goes from nothing to a principal, a session, a PAT and a chat call, on the memory store and on Redis
 * (where a ceremony begun on one instance finishes on another). Then every bad input: reused or expired
 * challenge, a challenge of the other ceremony, wrong origin, wrong rpID, no user verification, a bad
 * signature, a replayed counter, an unknown passkey, a passkey registered twice, malformed bodies — each
 * refused, and nothing half-done.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson, register, registerOptions, SoftAuthenticator } from '../helpers/passkey.js';

const chat = { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'Review this diff' }] };

function happyPaths(name: string, start: () => Promise<{ gw: TestGateway; stop(): Promise<void> }>) {
  describe(`passkeys: from nothing to a PAT (${name})`, () => {
    let gw: TestGateway;
    let stop: () => Promise<void>;
    before(async () => {
      ({ gw, stop } = await start());
    });
    after(() => stop());

    it('answers the WebAuthn options as @simplewebauthn/server generates them, rpID = the auth host name', async () => {
      const res = await registerOptions(new Browser(gw), { username: 'ada' });
      expect(res.status).to.equal(200);
      expect(res.body.rp).to.deep.equal({ name: 'portcullis', id: 'localhost' });
      expect(res.body.user.name).to.equal('ada');
      expect(res.body.challenge).to.match(/^[A-Za-z0-9_-]{32,}$/);
      expect(res.body.attestation).to.equal('none');
      expect(res.body.authenticatorSelection).to.include({ residentKey: 'required', userVerification: 'required' });
      expect(res.body.pubKeyCredParams.map((p: { alg: number }) => p.alg)).to.include(-7);
    });

    it('registers a new principal with a session, signs out, signs back in, issues a PAT and calls the chat API', async () => {
      const b = new Browser(gw);
      const a = new SoftAuthenticator();
      const { verify } = await register(b, a, { username: 'ada' });
      expect(verify.status).to.equal(200);
      expect(verify.body).to.deep.include({ verified: true, username: 'ada', created: true });
      expect(verify.body.principalId).to.match(/^did:web:portcullis\.localhost:tenant:[0-9a-f]{16}$/);
      const setCookie = verify.headers.getSetCookie().join('\n');
      expect(setCookie).to.match(/^portcullis_session=pcl_ses_[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/m);
      b.origin = gw.origins.console;
      expect((await b.get('api', '/v1/session')).body).to.deep.equal({ valid: true, username: 'ada', principalId: verify.body.principalId });

      expect((await b.post('auth', '/v1/session/end')).body).to.deep.equal({ ended: true });
      expect((await b.get('api', '/v1/session')).body.valid).to.equal(false);

      const again = await login(b, a);
      expect(again.verify.status).to.equal(200);
      expect(again.verify.body).to.deep.equal({ verified: true, principalId: verify.body.principalId, username: 'ada' });
      b.origin = gw.origins.console;
      const issued = await b.post('api', '/v1/account/api-token', { label: 'my agent' });
      expect(issued.status).to.equal(201);
      const call = await gw.chat(issued.body.token, chat);
      expect(call.status).to.equal(200);
      expect(call.body.billing).to.equal('free');
    });

    it('with a session, registration adds a passkey to the signed-in principal; either signs in', async () => {
      const b = new Browser(gw);
      const { principalId } = await newPerson(b);
      const second = new SoftAuthenticator();
      const added = await register(b, second);
      expect(added.verify.status).to.equal(200);
      expect(added.verify.body).to.deep.include({ principalId, created: false });
      // The first passkey is excluded from the second registration's options.
      expect(added.options.body.excludeCredentials).to.have.length(1);
      const elsewhere = new Browser(gw);
      expect((await login(elsewhere, second)).verify.body.principalId).to.equal(principalId);
    });

    it('a sign-up begun without a session cannot be finished with one: refused, the session kept, no account made', async () => {
      const signedIn = new Browser(gw);
      const { principalId } = await newPerson(signedIn);
      const stranger = new Browser(gw);
      const options = await registerOptions(stranger);
      const response = new SoftAuthenticator().create(options.body, gw.origins.auth);
      signedIn.origin = gw.origins.auth;
      const verify = await signedIn.post('auth', '/v1/passkey/register/verify', response);
      expect(verify.status, JSON.stringify(verify.body)).to.equal(400);
      expect(verify.body.error.code).to.equal('challenge-invalid');
      expect((await signedIn.get('api', '/v1/session')).body).to.deep.include({ valid: true, principalId });
    });

    it('works with an authenticator that keeps no counter (always 0)', async () => {
      const b = new Browser(gw);
      const a = new SoftAuthenticator(undefined, { counting: false });
      await register(b, a);
      for (let i = 0; i < 2; i++) expect((await login(new Browser(gw), a)).verify.status).to.equal(200);
    });
  });
}

happyPaths('memory store', async () => {
  const gw = await startTestGateway();
  return { gw, stop: () => gw.close() };
});

happyPaths('redis', async () => {
  const w = await startWorld();
  return { gw: w.gw, stop: () => w.stop() };
});

describe('passkeys: across instances and against bad input (redis)', () => {
  let w: World;
  let second: TestGateway;
  let clock = Date.now();
  const now = () => clock;
  const ORIGINS = {
    PORTCULLIS_AUTH_URL: 'http://localhost:18081',
    PORTCULLIS_CONSOLE_URL: 'http://localhost:18082',
    PORTCULLIS_API_URL: 'http://localhost:18080',
  };

  before(async () => {
    w = await startWorld({ now, env: ORIGINS });
    second = await startTestGateway({ upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url, now, env: ORIGINS });
  });
  after(async () => {
    await second.close();
    await w.stop();
  });
  afterEach(() => {
    clock = Date.now();
  });

  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.error.code).to.equal(code);
  };

  it('a ceremony begun on one instance finishes on another', async () => {
    const b = new Browser(w.gw);
    b.origin = w.gw.origins.auth;
    const a = new SoftAuthenticator();
    const options = await b.post('auth', '/v1/passkey/register/options', {});
    const onSecond = new Browser(second);
    onSecond.origin = second.origins.auth;
    const verify = await onSecond.post('auth', '/v1/passkey/register/verify', a.create(options.body, w.gw.origins.auth));
    expect(verify.status).to.equal(200);
    const lo = await b.post('auth', '/v1/passkey/login/options', {});
    const lv = await onSecond.post('auth', '/v1/passkey/login/verify', a.get(lo.body, w.gw.origins.auth));
    expect(lv.body.principalId).to.equal(verify.body.principalId);
  });

  it('a challenge works once: the same response sent again is 400 challenge-invalid', async () => {
    const b = new Browser(w.gw);
    const a = new SoftAuthenticator();
    const { response } = await register(b, a);
    expectError(await new Browser(w.gw).post('auth', '/v1/passkey/register/verify', response), 400, 'challenge-invalid');
    const { response: assertion } = await login(b, a);
    expectError(await new Browser(w.gw).post('auth', '/v1/passkey/login/verify', assertion), 400, 'challenge-invalid');
  });

  it('an expired challenge is 400 challenge-invalid, and creates nothing', async () => {
    const b = new Browser(w.gw);
    const options = await registerOptions(b);
    clock += w.gw.holder.current.gateway.passkeys.challengeMs;
    const res = await b.post('auth', '/v1/passkey/register/verify', new SoftAuthenticator().create(options.body, w.gw.origins.auth));
    expectError(res, 400, 'challenge-invalid');
    expect(res.headers.getSetCookie()).to.deep.equal([]);
    const principalId = Buffer.from(options.body.user.id, 'base64url').toString();
    expect((await w.gw.admin('GET', `/principals/${encodeURIComponent(principalId)}`)).status).to.equal(404);
  });

  it('a challenge of the other ceremony is 400 challenge-invalid', async () => {
    const b = new Browser(w.gw);
    const a = new SoftAuthenticator();
    await register(b, a);
    const regOptions = await registerOptions(b);
    // A login assertion over a registration challenge.
    expectError(await b.post('auth', '/v1/passkey/login/verify', a.get(regOptions.body, w.gw.origins.auth)), 400, 'challenge-invalid');
  });

  for (const [what, quirks, code, says] of [
    ['wrong origin', { origin: 'https://evil.example' }, 'passkey-rejected', /origin/],
    ['wrong rpID', { rpId: 'evil.example' }, 'passkey-rejected', /relying-party id/],
    ['no user verification', { userVerified: false }, 'passkey-rejected', /user verification/],
    ['wrong ceremony type', { type: 'webauthn.get' }, 'passkey-rejected', /another kind of ceremony/],
  ] as const) {
    it(`registration with ${what} is 401 ${code}, and creates nothing`, async () => {
      const b = new Browser(w.gw);
      const { options, verify } = await register(b, new SoftAuthenticator(), { quirks });
      expectError(verify, 401, code);
      expect(verify.body.error.message).to.match(says);
      expect(verify.headers.getSetCookie()).to.deep.equal([]);
      const principalId = Buffer.from(options.body.user.id, 'base64url').toString();
      expect((await w.gw.admin('GET', `/principals/${encodeURIComponent(principalId)}`)).status).to.equal(404);
    });
  }

  for (const [what, quirks, code, says] of [
    ['wrong origin', { origin: 'http://localhost:1' }, 'passkey-rejected', /origin/],
    ['wrong rpID', { rpId: 'evil.example' }, 'passkey-rejected', /relying-party id/],
    ['no user verification', { userVerified: false }, 'passkey-rejected', /user verification/],
    ['a bad signature', { wrongKey: true }, 'passkey-rejected', /signature does not verify/],
    ['wrong ceremony type', { type: 'webauthn.create' }, 'passkey-rejected', /another kind of ceremony/],
  ] as const) {
    it(`login with ${what} is 401 ${code}, with no session`, async () => {
      const a = new SoftAuthenticator();
      await register(new Browser(w.gw), a);
      const b = new Browser(w.gw);
      const { verify } = await login(b, a, quirks);
      expectError(verify, 401, code);
      expect(verify.body.error.message).to.match(says);
      expect(b.cookie).to.equal(null);
    });
  }

  it('a replayed counter is 401 passkey-replayed, even with a fresh challenge', async () => {
    const a = new SoftAuthenticator();
    await register(new Browser(w.gw), a);
    expect((await login(new Browser(w.gw), a)).verify.status).to.equal(200); // counter 1
    expect((await login(new Browser(w.gw), a)).verify.status).to.equal(200); // counter 2
    const b = new Browser(w.gw);
    expectError((await login(b, a, { counter: 2 })).verify, 401, 'passkey-replayed');
    expectError((await login(b, a, { counter: 1 })).verify, 401, 'passkey-replayed');
    expect(b.cookie).to.equal(null);
    expect((await login(b, a)).verify.status).to.equal(200); // counter 3
  });

  it('a passkey no account has is 401 passkey-unknown', async () => {
    const stranger = new SoftAuthenticator();
    stranger.rpId = 'localhost';
    expectError((await login(new Browser(w.gw), stranger)).verify, 401, 'passkey-unknown');
  });

  it('registering the same passkey twice is 409 passkey-exists, and creates no second principal', async () => {
    const a = new SoftAuthenticator();
    await register(new Browser(w.gw), a);
    const { options, verify } = await register(new Browser(w.gw), a);
    expectError(verify, 409, 'passkey-exists');
    const principalId = Buffer.from(options.body.user.id, 'base64url').toString();
    expect((await w.gw.admin('GET', `/principals/${encodeURIComponent(principalId)}`)).status).to.equal(404);
  });

  it('a challenge issued to a signed-in principal cannot be finished without that session', async () => {
    const b = new Browser(w.gw);
    await newPerson(b);
    const options = await registerOptions(b);
    const stranger = new Browser(w.gw);
    stranger.origin = w.gw.origins.auth;
    expectError(
      await stranger.post('auth', '/v1/passkey/register/verify', new SoftAuthenticator().create(options.body, w.gw.origins.auth)),
      400,
      'challenge-invalid',
    );
  });

  it('adding a passkey with the session cookie is same-origin only', async () => {
    const b = new Browser(w.gw);
    await newPerson(b);
    b.origin = 'https://evil.example';
    expectError(await b.post('auth', '/v1/passkey/register/options', {}), 403, 'cross-site-request');
  });

  it('a sign-in from a cross-site page is 403 cross-site-request and sets no cookie (no login CSRF)', async () => {
    const a = new SoftAuthenticator();
    await register(new Browser(w.gw), a);
    const b = new Browser(w.gw, w.gw.origins.auth);
    const options = await b.post('auth', '/v1/passkey/login/options', {});
    b.origin = 'https://evil.example';
    const res = await b.post('auth', '/v1/passkey/login/verify', a.get(options.body, w.gw.origins.auth));
    expectError(res, 403, 'cross-site-request');
    expect(res.headers.getSetCookie()).to.deep.equal([]);
    b.origin = null;
    expectError(await b.post('auth', '/v1/passkey/login/options', {}), 403, 'cross-site-request');
  });

  it('malformed bodies are 400 and touch no challenge', async () => {
    const b = new Browser(w.gw);
    b.origin = w.gw.origins.auth;
    expectError(await b.post('auth', '/v1/passkey/register/verify', {}), 400, 'invalid-request');
    expectError(
      await b.post('auth', '/v1/passkey/login/verify', {
        id: 'x',
        rawId: 'x',
        type: 'public-key',
        response: { clientDataJSON: 'bm90IGpzb24', authenticatorData: '', signature: '' },
      }),
      400,
      'invalid-request',
    );
    expectError(await b.post('auth', '/v1/passkey/register/options', { username: '' }), 400, 'invalid-request');
    expectError(await b.post('auth', '/v1/passkey/login/options', { extra: true }), 400, 'invalid-request');
    expectError(await b.post('auth', '/v1/passkey/login/options', '{'), 400, 'invalid-json');
    expectError(await b.request('auth', 'POST', '/v1/passkey/login/options', 'x', { 'content-type': 'text/plain' }), 415, 'unsupported-media-type');
  });
});
