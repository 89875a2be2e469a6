/**
 * Recovery after losing every sign-in method: a phrase-derived key (derived here, on the person's side;
 * the server keeps only the public key) and the offline one-time secret start a recovery that completes no
 * sooner than recovery.delayHours later on the gateway's clock, and that any sign-in of the account (every
 * method, the TOTP step too) or any request of its sessions ends meanwhile, telling the owner; completing
 * still owes the TOTP code where one is enrolled. Then every way it is refused — without telling whether a key exists. And the link hint.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile, REPO } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson, register, SoftAuthenticator } from '../helpers/passkey.js';
import { completeRecovery, signedChallenge, startRecovery } from '../helpers/recovery.js';
import { newWallet, siweText, signedCacao } from '../helpers/wallet.js';
import { newPhrase, recoveryKey } from '../../src/recovery/phrase.js';
import { codeAt } from '../../src/totp/codes.js';
import { loadConfig } from '../../src/config/load.js';

const HOUR = 3_600_000;

describe('recovery', () => {
  let w: World;
  let clock = Date.now();
  const now = () => clock;
  before(async () => {
    w = await startWorld({ now });
  });
  after(() => w.stop());

  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect(res.status, JSON.stringify(res.body)).to.equal(status);
    expect(res.body.error.code).to.equal(code);
  };

  /** A person with a passkey who set up recovery: the phrase never leaves this side. */
  async function prepared() {
    const b = new Browser(w.gw, w.gw.origins.auth);
    const { a, principalId } = await newPerson(b);
    const phrase = newPhrase();
    const setup = await b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(phrase).publicKey });
    expect(setup.status, JSON.stringify(setup.body)).to.equal(200);
    return { a, b, principalId, phrase, secret: setup.body.recoverySecret as string };
  }

  it('set-up shows the one-time secret once; the server holds the public key only', async () => {
    const { b, phrase, secret, principalId } = await prepared();
    expect(secret).to.match(/^[a-z2-9]{4}(-[a-z2-9]{1,4}){6}$/);
    expect((await b.get('auth', '/v1/recovery')).body).to.deep.equal({ setUp: true, pending: null, cancelled: null });
    const redis = await createClient({ url: w.redis.url }).connect();
    const keys = await redis.keys('*');
    const stored = JSON.stringify(await Promise.all(keys.filter((k) => /:rkp?:/.test(k)).map(async (k) => [k, await redis.get(k)])));
    await redis.quit();
    expect(stored).to.contain(principalId).and.to.contain(recoveryKey(phrase).publicKey);
    expect(stored).to.not.contain(phrase);
    expect(stored).to.not.contain(secret).and.to.not.contain(secret.replace(/-/g, ''));
  });

  it('phrase + secret start a recovery that completes only after the delay; the new session adds a passkey', async () => {
    const { a, phrase, secret, principalId } = await prepared();
    const lost = new Browser(w.gw, w.gw.origins.auth);
    const start = await startRecovery(lost, phrase, secret);
    expect(start.status, JSON.stringify(start.body)).to.equal(202);
    const delay = w.gw.holder.current.gateway.recovery.delayHours * HOUR;
    expect(Date.parse(start.body.completesAt)).to.equal(clock + delay);
    const early = await completeRecovery(lost, phrase);
    expectError(early, 403, 'recovery-not-ready');
    expect(early.body.error.message).to.contain(start.body.completesAt);
    clock += delay - 1;
    expectError(await completeRecovery(lost, phrase), 403, 'recovery-not-ready');
    clock += 1;
    const done = await completeRecovery(lost, phrase);
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect(done.body).to.deep.include({ verified: true, principalId });
    const fresh = new SoftAuthenticator();
    const added = await register(lost, fresh);
    expect(added.verify.body).to.deep.include({ principalId, created: false });
    expect((await login(new Browser(w.gw), fresh)).verify.body.principalId).to.equal(principalId);
    // The secret was one-time, and the recovery is over.
    expectError(await startRecovery(new Browser(w.gw), phrase, secret), 401, 'recovery-rejected');
    expectError(await completeRecovery(new Browser(w.gw), phrase), 401, 'recovery-rejected');
    // The old passkey still signs in (the person may find it again).
    expect((await login(new Browser(w.gw), a)).verify.status).to.equal(200);
    clock = Date.now();
  });

  /** The attacker holds phrase and secret and waits out the delay; the owner's act must stop them. */
  async function attackerWaitsOut(phrase: string, secret: string, ownerActs: () => Promise<void>) {
    const attacker = new Browser(w.gw, w.gw.origins.auth);
    expect((await startRecovery(attacker, phrase, secret)).status).to.equal(202);
    await ownerActs();
    clock += w.gw.holder.current.gateway.recovery.delayHours * HOUR;
    const late = await completeRecovery(attacker, phrase);
    clock = Date.now();
    return late;
  }

  it('a passkey sign-in ends a recovery under way, even one still owing its TOTP code, and tells the owner', async () => {
    const { a, b, phrase, secret } = await prepared();
    const enrol = await b.post('auth', '/v1/totp/enrol');
    await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, clock) });
    const owner = new Browser(w.gw);
    const late = await attackerWaitsOut(phrase, secret, async () => {
      expect((await login(owner, a)).verify.body.secondFactor).to.equal('totp');
    });
    expectError(late, 401, 'recovery-rejected');
    const status = await owner.get('auth', '/v1/recovery');
    expect(status.body.pending).to.equal(null);
    expect(status.body.cancelled).to.include({ by: 'passkey' });
    expect(Date.parse(status.body.cancelled.cancelledAt)).to.be.at.least(Date.parse(status.body.cancelled.startedAt));
    // Nothing is left to cancel by hand.
    expect((await owner.post('auth', '/v1/recovery/cancel')).body).to.deep.equal({ cancelled: false });
  });

  it('the TOTP step of a sign-in ends a recovery started between the passkey and the code', async () => {
    const { a, b, phrase, secret } = await prepared();
    const enrol = await b.post('auth', '/v1/totp/enrol');
    await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, clock) });
    const owner = new Browser(w.gw);
    expect((await login(owner, a)).verify.body.secondFactor).to.equal('totp');
    const late = await attackerWaitsOut(phrase, secret, async () => {
      const verified = await owner.post('auth', '/v1/totp/verify', { code: codeAt(enrol.body.secret, clock + 30_000) });
      expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
    });
    expectError(late, 401, 'recovery-rejected');
    // The code's request is the pending-2fa session's: it ends the recovery (as `session`) before the code
    // is even checked; either way the owner is told.
    expect((await owner.get('auth', '/v1/recovery')).body.cancelled.by).to.be.oneOf(['totp', 'session']);
  });

  it('any request of a live session of the account ends a recovery under way', async () => {
    const { b, phrase, secret } = await prepared();
    const late = await attackerWaitsOut(phrase, secret, async () => {
      expect((await b.get('auth', '/v1/account/sign-in-methods')).status).to.equal(200);
    });
    expectError(late, 401, 'recovery-rejected');
    expect((await b.get('auth', '/v1/recovery')).body.cancelled).to.include({ by: 'session' });
  });

  for (const method of ['siwe', 'cacao'] as const) {
    it(`a ${method.toUpperCase()} sign-in ends a recovery under way`, async () => {
      const wallet = newWallet();
      const signIn = async (b: Browser) => {
        const nonce = (await b.post('auth', '/v1/siwe/nonce')).body.nonce as string;
        if (method === 'cacao') {
          const cacao = await signedCacao(wallet, { domain: new URL(w.gw.origins.auth).host, aud: w.gw.origins.auth, nonce, chainId: 1 });
          return b.post('auth', '/v1/cacao/session', { cacao });
        }
        const fields = (await b.post('auth', '/v1/siwe/options')).body;
        const message = siweText(wallet.address, fields);
        return b.post('auth', '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
      };
      const b = new Browser(w.gw, w.gw.origins.auth);
      const first = await signIn(b);
      expect(first.status, JSON.stringify(first.body)).to.equal(200);
      const phrase = newPhrase();
      const secret = (await b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(phrase).publicKey })).body.recoverySecret as string;
      const owner = new Browser(w.gw, w.gw.origins.auth);
      const late = await attackerWaitsOut(phrase, secret, async () => {
        expect((await signIn(owner)).status).to.equal(200);
      });
      expectError(late, 401, 'recovery-rejected');
      expect((await owner.get('auth', '/v1/recovery')).body.cancelled).to.include({ by: method });
    });
  }

  it('completing a recovery still owes the TOTP code where one is enrolled', async () => {
    const { b, phrase, secret, principalId } = await prepared();
    const enrol = await b.post('auth', '/v1/totp/enrol');
    const confirmed = await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, clock) });
    expect((await b.post('auth', '/v1/session/end')).status).to.equal(200);
    const lost = new Browser(w.gw, w.gw.origins.auth);
    expect((await startRecovery(lost, phrase, secret)).status).to.equal(202);
    clock += w.gw.holder.current.gateway.recovery.delayHours * HOUR;
    const done = await completeRecovery(lost, phrase);
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect(done.body).to.deep.include({ principalId, secondFactor: 'totp' });
    // Without the code the session cannot add a passkey; a recovery code completes it.
    expectError(await lost.get('auth', '/v1/account/sign-in-methods'), 401, 'second-factor-required');
    const verified = await lost.post('auth', '/v1/totp/verify', { recoveryCode: confirmed.body.recoveryCodes[0] });
    expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
    clock = Date.now();
  });

  it('refuses a wrong secret, a wrong phrase, an unknown key and a bad signature alike, and uses nothing up', async () => {
    const { phrase, secret } = await prepared();
    const b = new Browser(w.gw);
    const answers = [
      await startRecovery(b, phrase, 'aaaa-bbbb-cccc-dddd-eeee-ffff-gg'),
      await startRecovery(b, newPhrase(), secret),
      await b.post('auth', '/v1/recovery/start', {
        ...(await signedChallenge(b, phrase)),
        signature: recoveryKey(newPhrase()).sign('x'),
        recoverySecret: secret,
      }),
    ];
    for (const res of answers) expectError(res, 401, 'recovery-rejected');
    expect(new Set(answers.map((r) => JSON.stringify(r.body))).size).to.equal(1);
    // The right secret, in another spelling, still works afterwards.
    expect((await startRecovery(b, phrase, secret.toUpperCase().replace(/-/g, ''))).status).to.equal(202);
    // Setting recovery up again is the owner acting: the recovery under way ends, the new secret starts one
    // (a start while one is pending is 409 recovery-pending: the store contract suite races it).
    const again = await prepared();
    const first = await startRecovery(new Browser(w.gw), again.phrase, again.secret);
    const second = await again.b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(again.phrase).publicKey });
    expect((await again.b.get('auth', '/v1/recovery')).body.cancelled).to.include({ id: first.body.recoveryId, by: 'session' });
    expect((await startRecovery(new Browser(w.gw), again.phrase, second.body.recoverySecret)).status).to.equal(202);
  });

  it('a challenge works once and not after its time', async () => {
    const { phrase, secret } = await prepared();
    const b = new Browser(w.gw);
    const signed = await signedChallenge(b, phrase);
    clock += w.gw.holder.current.gateway.recovery.challengeMs;
    expectError(await b.post('auth', '/v1/recovery/start', { ...signed, recoverySecret: secret }), 400, 'challenge-invalid');
    clock = Date.now();
    const fresh = await signedChallenge(b, phrase);
    expectError(await b.post('auth', '/v1/recovery/start', { ...fresh, recoverySecret: 'wrong' }), 401, 'recovery-rejected');
    expectError(await b.post('auth', '/v1/recovery/start', { ...fresh, recoverySecret: secret }), 400, 'challenge-invalid');
  });

  it('set-up is a signed-in, same-origin act; bad bodies are 400', async () => {
    const { b } = await prepared();
    const p = await w.gw.principal();
    expectError(await new Browser(w.gw).post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(newPhrase()).publicKey }), 401, 'session-required');
    expectError(
      await new Browser(w.gw).post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(newPhrase()).publicKey }, { authorization: `Bearer ${p.token}` }),
      403,
      'pat-not-accepted',
    );
    b.origin = 'https://evil.example';
    expectError(await b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(newPhrase()).publicKey }), 403, 'cross-site-request');
    b.origin = w.gw.origins.auth;
    for (const bad of [{}, { publicKey: 'short' }, { publicKey: recoveryKey(newPhrase()).publicKey, extra: 1 }]) {
      expectError(await b.post('auth', '/v1/recovery/setup', bad), 400, 'invalid-request');
    }
    expectError(await b.post('auth', '/v1/recovery/start', { publicKey: 'x' }), 400, 'invalid-request');
    expectError(
      await b.post('auth', '/v1/recovery/complete', { publicKey: recoveryKey(newPhrase()).publicKey, challenge: 'c'.repeat(43), signature: 's' }),
      400,
      'invalid-request',
    );
    // Another account's key cannot be taken over.
    const other = await prepared();
    expectError(await b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(other.phrase).publicKey }), 400, 'invalid-request');
  });

  it('the delay cannot be configured below 48 hours', () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) => t.replace('delayHours: 48', 'delayHours: 47'));
    expect(() => loadConfig(root)).to.throw(/\/recovery\/delayHours must be >= 48/);
    expect(loadConfig(REPO).gateway.data.recovery.delayHours).to.be.at.least(48);
  });

  describe('GET /v1/link/hint', () => {
    it('names the methods an account has', async () => {
      const { b, principalId } = await prepared();
      expect((await b.get('auth', `/v1/link/hint?id=${encodeURIComponent(principalId)}`)).body).to.deep.equal({ methods: ['passkey', 'recovery'] });
      const enrol = await b.post('auth', '/v1/totp/enrol');
      await b.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(enrol.body.secret, clock) });
      expect((await b.get('auth', `/v1/link/hint?id=${encodeURIComponent(principalId)}`)).body).to.deep.equal({ methods: ['passkey', 'totp', 'recovery'] });
    });

    it('never tells whether an identifier exists: an unknown one answers like a passkey-only account', async () => {
      const b = new Browser(w.gw);
      const { principalId } = await newPerson(b);
      const known = await b.get('auth', `/v1/link/hint?id=${encodeURIComponent(principalId)}`);
      const unknown = await new Browser(w.gw).get('auth', `/v1/link/hint?id=${encodeURIComponent(principalId.replace(/[0-9a-f]{4}$/, 'zzzz'))}`);
      expect(unknown.status).to.equal(200);
      expect(unknown.body).to.deep.equal(known.body);
      expect([...unknown.headers.keys()].sort()).to.deep.equal([...known.headers.keys()].sort());
    });

    it('refuses an id that is not a principal id, and answers only on the auth host', async () => {
      const b = new Browser(w.gw);
      expectError(await b.get('auth', '/v1/link/hint'), 400, 'invalid-request');
      expectError(await b.get('auth', '/v1/link/hint?id=alice'), 400, 'invalid-request');
      expect((await b.get('api', '/v1/link/hint?id=did:web:x:tenant:a')).status).to.equal(404);
    });
  });
});
