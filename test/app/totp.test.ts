/**
 * TOTP as a second factor, with real RFC 6238 codes on the gateway's clock: enrolment with recovery codes,
 * a primary sign-in that yields only a pending-2fa session until a code is given (on either instance), a
 * code that works once, a recovery code that works once, the attempt limit, the pending lifetime, and
 * every malformed or misplaced request.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson, type SoftAuthenticator } from '../helpers/passkey.js';
import { codeAt } from '../../src/totp/codes.js';

const ORIGINS = {
  PORTCULLIS_AUTH_URL: 'http://localhost:28081',
  PORTCULLIS_CONSOLE_URL: 'http://localhost:28082',
  PORTCULLIS_API_URL: 'http://localhost:28080',
};
const STEP = 30_000;

describe('totp', () => {
  let w: World;
  let second: TestGateway;
  let clock = Date.now();
  const now = () => clock;

  before(async () => {
    w = await startWorld({ now, env: ORIGINS });
    second = await startTestGateway({ upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url, now, env: ORIGINS });
  });
  after(async () => {
    await second.close();
    await w.stop();
  });

  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.error.code).to.equal(code);
  };

  /** A person with a passkey and TOTP enrolled; the clock is one step past the confirming code. */
  async function enrolled(): Promise<{ a: SoftAuthenticator; secret: string; recoveryCodes: string[]; principalId: string }> {
    const b = new Browser(w.gw);
    const { a, principalId } = await newPerson(b);
    const enrol = await b.post('auth', '/v1/totp/enrol');
    expect(enrol.status).to.equal(200);
    const { secret } = enrol.body;
    const confirm = await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(secret, clock) });
    expect(confirm.status, JSON.stringify(confirm.body)).to.equal(200);
    clock += STEP;
    return { a, secret, recoveryCodes: confirm.body.recoveryCodes, principalId };
  }

  /** A primary sign-in with the passkey: a pending-2fa session. */
  async function signIn(a: SoftAuthenticator, gw: TestGateway = w.gw): Promise<Browser> {
    const b = new Browser(gw);
    const { verify } = await login(b, a);
    expect(verify.status).to.equal(200);
    expect(verify.body.secondFactor).to.equal('totp');
    return b;
  }

  it('enrols: a secret and otpauth URI, then the first code confirms and yields recovery codes once', async () => {
    const b = new Browser(w.gw);
    await newPerson(b, 'grace');
    const enrol = await b.post('auth', '/v1/totp/enrol');
    expect(enrol.body.secret).to.match(/^[A-Z2-7]{32}$/);
    expect(enrol.body.uri).to.match(/^otpauth:\/\/totp\/portcullis:grace\?issuer=portcullis&secret=[A-Z2-7]{32}&algorithm=SHA1&digits=6&period=30$/);
    expect(enrol.headers.get('cache-control')).to.equal('no-store');
    expectError(await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, clock + 10 * STEP) }), 401, 'totp-code-invalid');
    const confirm = await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, clock) });
    expect(confirm.body.enrolled).to.equal(true);
    expect(confirm.body.recoveryCodes).to.have.length(10);
    expect(new Set(confirm.body.recoveryCodes).size).to.equal(10);
    for (const c of confirm.body.recoveryCodes) expect(c).to.match(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
    expectError(await b.post('auth', '/v1/totp/enrol'), 409, 'totp-already-enrolled');
    // The session that enrolled stays signed in.
    expect((await b.get('api', '/v1/session')).body.valid).to.equal(true);
  });

  it('after a primary sign-in the session is pending-2fa: it acts as nobody until a code is given', async () => {
    const { a, secret, principalId } = await enrolled();
    const b = await signIn(a);
    expect((await b.get('api', '/v1/session')).body).to.deep.equal({ valid: false, secondFactor: 'totp' });
    b.origin = w.gw.origins.console;
    expectError(await b.get('api', '/v1/account/api-tokens'), 401, 'second-factor-required');
    expectError(
      await b.post('api', '/v1/chat/completions', { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] }),
      401,
      'second-factor-required',
    );
    // The code is given on the other instance.
    const there = new Browser(second, second.origins.auth);
    there.cookie = b.cookie;
    const verify = await there.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) });
    expect(verify.status, JSON.stringify(verify.body)).to.equal(200);
    expect(verify.body).to.deep.include({ verified: true, principalId });
    expect(verify.body).to.not.have.property('secondFactor');
    expect((await b.get('api', '/v1/session')).body.valid).to.equal(true);
    expect((await b.post('api', '/v1/account/api-token', { label: 'agent' })).status).to.equal(201);
    expectError(await there.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) }), 409, 'totp-not-pending');
  });

  it('a code works once, on any instance: the same code again is 401 totp-code-reused, and so is an older one', async () => {
    const { a, secret } = await enrolled();
    const code = codeAt(secret, clock);
    const previous = codeAt(secret, clock - STEP);
    const first = await signIn(a);
    expect((await first.post('auth', '/v1/totp/verify', { code })).status).to.equal(200);
    const again = await signIn(a, second);
    expectError(await again.post('auth', '/v1/totp/verify', { code }), 401, 'totp-code-reused');
    expectError(await again.post('auth', '/v1/totp/verify', { code: previous }), 401, 'totp-code-reused');
    clock += STEP;
    expect((await again.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) })).status).to.equal(200);
  });

  it('a recovery code works once, in any spelling', async () => {
    const { a, recoveryCodes } = await enrolled();
    const b = await signIn(a);
    const res = await b.post('auth', '/v1/totp/verify', { recoveryCode: recoveryCodes[3]!.toUpperCase().replace(/-/g, ' ') });
    expect(res.status).to.equal(200);
    expect(res.body.recoveryCodesLeft).to.equal(9);
    const c = await signIn(a);
    expectError(await c.post('auth', '/v1/totp/verify', { recoveryCode: recoveryCodes[3] }), 401, 'totp-code-invalid');
    expect((await c.post('auth', '/v1/totp/verify', { recoveryCode: recoveryCodes[4] })).body.recoveryCodesLeft).to.equal(8);
  });

  it('wrong codes are limited: at the limit every code is refused 429 and the pending sign-in ends, until the lockout passes', async () => {
    const { a, secret } = await enrolled();
    const { maxAttempts, lockoutMs } = w.gw.holder.current.gateway.totp;
    const b = await signIn(a);
    const wrong = codeAt(secret, clock + 20 * STEP);
    for (let i = 1; i < maxAttempts; i++) expectError(await b.post('auth', '/v1/totp/verify', { code: wrong }), 401, 'totp-code-invalid');
    const locked = await b.post('auth', '/v1/totp/verify', { code: wrong });
    expectError(locked, 429, 'totp-locked');
    expect(locked.headers.get('retry-after')).to.equal(String(lockoutMs / 1000));
    expect(b.cookie).to.equal(null);
    // A new sign-in with the right code is still refused while locked ...
    const c = await signIn(a);
    expectError(await c.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) }), 429, 'totp-locked');
    // ... and accepted once the lockout has passed.
    clock += lockoutMs;
    const d = await signIn(a);
    expect((await d.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) })).status).to.equal(200);
  });

  it('a pending sign-in waits totp.pendingMs for its code, then it is over', async () => {
    const { a, secret } = await enrolled();
    const b = await signIn(a);
    clock += w.gw.holder.current.gateway.totp.pendingMs;
    expectError(await b.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) }), 401, 'session-ended');
  });

  it('refuses misplaced and malformed requests', async () => {
    const { a, secret } = await enrolled();
    expectError(await new Browser(w.gw, w.gw.origins.auth).post('auth', '/v1/totp/verify', { code: '123456' }), 401, 'session-required');
    const b = await signIn(a);
    for (const bad of [{}, { code: '12345' }, { code: 123456 }, { code: '123456', recoveryCode: 'x' }, { code: '123456', extra: 1 }]) {
      expectError(await b.post('auth', '/v1/totp/verify', bad), 400, 'invalid-request');
    }
    b.origin = 'https://evil.example';
    expectError(await b.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) }), 403, 'cross-site-request');
    b.origin = w.gw.origins.auth;
    expect((await b.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) })).status).to.equal(200);
    expectError(await b.post('auth', '/v1/totp/enrol/confirm', { code: '123456' }), 409, 'totp-not-pending');
    const p = await w.gw.principal();
    expectError(await new Browser(w.gw).post('auth', '/v1/totp/enrol', {}, { authorization: `Bearer ${p.token}` }), 403, 'pat-not-accepted');
  });
});
