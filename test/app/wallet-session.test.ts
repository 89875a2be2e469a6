/**
 * A wallet sign-in ends in a browser session, as a person meets it: the verify answer sets the session
 * cookie, GET /v1/session on the API host then names the principal, the person issues a PAT with that
 * session and calls the chat API with it. A refused sign-in sets no cookie. Signing out ends the session
 * on a second instance at once. With TOTP enrolled, a wallet sign-in owes a code like any primary sign-in.
 * SIWE and CACAO with real secp256k1 keys; the smart account with a real
 * contract wallet on a local node (anvil, chain 8453); on the memory store and on a real redis-server.
 */
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { deployFactory, SoftwarePasskey } from '../helpers/passkey-account.js';
import { Browser } from '../helpers/browser.js';
import { newWallet, siweText, signedCacao, type Fields } from '../helpers/wallet.js';
import { codeAt } from '../../src/totp/codes.js';

const chat = { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

describe('wallet sign-in ends in a session', function () {
  this.timeout(60_000);
  let node: Anvil;
  let factory: Awaited<ReturnType<typeof deployFactory>>;
  before(async () => {
    node = await startAnvil(8453);
    factory = await deployFactory(node);
  });
  after(() => node.stop());

  for (const storeKind of ['memory', 'redis'] as const) {
    describe(`${storeKind} store`, () => {
      let redis: RedisServer | null = null;
      let gw: TestGateway;
      before(async () => {
        if (storeKind === 'redis') redis = await startRedisServer();
        gw = await startTestGateway({ ...(redis ? { redisUrl: redis.url } : {}), env: { PORTCULLIS_SMART_ACCOUNT_RPC_URL: node.url } });
      });
      after(async () => {
        await gw.close();
        await redis?.stop();
      });

      /** The browser of a person on the sign-in page. */
      const person = () => new Browser(gw, gw.origins.auth);

      async function expectSignedIn(b: Browser, principalId: string): Promise<void> {
        const s = await b.get('api', '/v1/session');
        expect(s.body).to.deep.include({ valid: true, principalId });
        const onAuth = await b.get('auth', '/v1/session');
        expect(onAuth.body).to.deep.include({ valid: true, principalId });
      }

      it('SIWE: the answer sets the cookie; with it the person issues a PAT that calls the chat API', async () => {
        const b = person();
        const wallet = newWallet();
        const fields = (await b.post('auth', '/v1/siwe/options')).body as Fields;
        const message = siweText(wallet.address, fields);
        const r = await b.post('auth', '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        expect(r.body.method).to.equal('siwe');
        expect(r.headers.get('cache-control')).to.equal('no-store');
        expect(b.cookie).to.match(/^pcl_ses_/);
        await expectSignedIn(b, r.body.principalId);
        b.origin = gw.origins.console;
        const pat = await b.post('api', '/v1/account/api-token', { label: 'wallet agent' });
        expect(pat.status, JSON.stringify(pat.body)).to.equal(201);
        const call = await gw.chat(pat.body.token, chat);
        expect(call.status, JSON.stringify(call.body)).to.equal(200);
      });

      it('CACAO: the answer sets the cookie for the principal of its account', async () => {
        const b = person();
        const wallet = newWallet();
        const nonce = (await b.post('auth', '/v1/siwe/nonce')).body.nonce as string;
        const cacao = await signedCacao(wallet, { domain: new URL(gw.origins.auth).host, aud: gw.origins.auth, nonce, chainId: 8453 });
        const r = await b.post('auth', '/v1/cacao/session', { cacao });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        expect(r.body.method).to.equal('cacao');
        await expectSignedIn(b, r.body.principalId);
      });

      it("smart account: the answer sets the cookie for the account's principal", async () => {
        const b = person();
        const account = factory.account(new SoftwarePasskey(new URL(gw.origins.auth).hostname, gw.origins.auth));
        const fields = (await b.post('auth', '/v1/passkey/smart-account/options')).body as Fields;
        const message = siweText(account.address, fields);
        const r = await b.post('auth', '/v1/passkey/smart-account/verify', { message, signature: account.signMessageUndeployed(message) });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        expect(r.body.method).to.equal('smart-account');
        await expectSignedIn(b, r.body.principalId);
      });

      it('a refused sign-in sets no cookie', async () => {
        const b = person();
        const wallet = newWallet();
        const fields = (await b.post('auth', '/v1/siwe/options')).body as Fields;
        const message = siweText(wallet.address, fields);
        const r = await b.post('auth', '/v1/siwe/verify', { message, signature: await newWallet().signMessage({ message }) });
        expect(r.status).to.equal(401);
        expect(r.headers.getSetCookie()).to.deep.equal([]);
        expect(b.cookie).to.equal(null);
        expect((await b.get('api', '/v1/session')).body).to.deep.equal({ valid: false });
      });
    });
  }

  it('signing out on one instance ends a wallet session on another at once', async () => {
    const redis = await startRedisServer();
    // Two instances of one deployment behind one public auth origin, sharing the Redis store.
    const env = { PORTCULLIS_AUTH_URL: 'http://localhost:8081' };
    const a = await startTestGateway({ redisUrl: redis.url, env: { ...env } });
    const b = await startTestGateway({ redisUrl: redis.url, env: { ...env } });
    try {
      const onA = new Browser(a, a.origins.auth);
      const wallet = newWallet();
      const fields = (await onA.post('auth', '/v1/siwe/options')).body as Fields;
      const message = siweText(wallet.address, fields);
      const r = await onA.post('auth', '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const onB = new Browser(b, b.origins.auth);
      onB.cookie = onA.cookie;
      expect((await onB.get('api', '/v1/session')).body).to.deep.include({ valid: true, principalId: r.body.principalId });
      expect((await onA.post('auth', '/v1/session/end')).body).to.deep.equal({ ended: true });
      expect((await onB.get('api', '/v1/session')).body).to.deep.equal({ valid: false });
    } finally {
      await a.close();
      await b.close();
      await redis.stop();
    }
  });

  it('with TOTP enrolled, a wallet sign-in is pending-2fa until a code is given', async () => {
    let clock = Date.now();
    const gw = await startTestGateway({ now: () => clock });
    try {
      const wallet = newWallet();
      const signIn = async (b: Browser) => {
        const fields = (await b.post('auth', '/v1/siwe/options')).body as Fields;
        const message = siweText(wallet.address, fields);
        return b.post('auth', '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
      };
      const first = new Browser(gw, gw.origins.auth);
      const made = await signIn(first);
      expect(made.body).to.include({ verified: true, created: true });
      expect(made.body).to.not.have.property('secondFactor');
      const { secret } = (await first.post('auth', '/v1/totp/enrol')).body as { secret: string };
      expect((await first.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(secret, clock) })).status).to.equal(200);
      clock += 30_000;

      const b = new Browser(gw, gw.origins.auth);
      const again = await signIn(b);
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      expect(again.body).to.include({ principalId: made.body.principalId, secondFactor: 'totp' });
      expect((await b.get('api', '/v1/session')).body).to.deep.equal({ valid: false, secondFactor: 'totp' });
      b.origin = gw.origins.console;
      expect((await b.post('api', '/v1/account/api-token', { label: 'too early' })).body.error.code).to.equal('second-factor-required');
      b.origin = gw.origins.auth;
      const verified = await b.post('auth', '/v1/totp/verify', { code: codeAt(secret, clock) });
      expect(verified.status, JSON.stringify(verified.body)).to.equal(200);
      expect((await b.get('api', '/v1/session')).body).to.deep.include({ valid: true, principalId: made.body.principalId });
    } finally {
      await gw.close();
    }
  });
});
