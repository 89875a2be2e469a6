/**
 * SIWE (EIP-4361) and DID/CACAO (CAIP-74) sign-in, end to end over HTTP on the auth host of a test gateway,
 * once on the memory store and once on a real redis-server: real secp256k1 keys sign real messages. A first
 * sign-in makes a principal, a later one finds it; every bad input is refused with its own code and leaves
 * the nonce as it was (a forged attempt does not burn it) or spent (a used one stays used).
 */
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { newWallet, post, siweText, signedCacao, type Fields } from '../helpers/wallet.js';

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`wallet sign-in: SIWE and CACAO (${storeKind} store)`, () => {
    let redis: RedisServer | null = null;
    let gw: TestGateway;
    let auth: string;
    before(async () => {
      if (storeKind === 'redis') redis = await startRedisServer();
      gw = await startTestGateway(redis ? { redisUrl: redis.url } : {});
      auth = gw.urls.auth;
    });
    after(async () => {
      await gw.close();
      await redis?.stop();
    });

    const options = async (body?: unknown): Promise<Fields> => {
      const r = await post(auth, '/v1/siwe/options', body);
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      return r.body as Fields;
    };
    const signIn = async (wallet = newWallet(), patch: Parameters<typeof siweText>[2] = {}) => {
      const fields = await options();
      const message = siweText(wallet.address, fields, patch);
      return post(auth, '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
    };
    const code = (r: { body: any }) => r.body?.error?.code;

    describe('SIWE', () => {
      it('/v1/siwe/nonce answers a fresh nonce; /v1/siwe/options the fields to sign, for this auth host', async () => {
        const a = await post(auth, '/v1/siwe/nonce');
        const b = await post(auth, '/v1/siwe/nonce', {});
        expect(a.status).to.equal(200);
        expect(Object.keys(a.body)).to.deep.equal(['nonce']);
        expect(a.body.nonce).to.match(/^[A-Za-z0-9]{8,}$/);
        expect(a.body.nonce).to.not.equal(b.body.nonce);
        const f = await options();
        expect(Object.keys(f).sort()).to.deep.equal(['chainId', 'domain', 'expirationTime', 'issuedAt', 'nonce', 'statement', 'uri', 'version']);
        expect(f.domain).to.equal(new URL(gw.origins.auth).host);
        expect(f.uri).to.equal(gw.origins.auth);
        expect(f.chainId).to.equal(1);
        expect(f.version).to.equal('1');
        expect(Date.parse(f.expirationTime) - Date.parse(f.issuedAt)).to.equal(300_000);
        expect((await options({ chainId: 8453 })).chainId).to.equal(8453);
      });

      it('an unseen address becomes a new principal; the same address later signs in to it', async () => {
        const wallet = newWallet();
        const first = await signIn(wallet);
        expect(first.status, JSON.stringify(first.body)).to.equal(200);
        expect(first.body.principalId).to.match(/^did:web:portcullis\.localhost:tenant:[a-z0-9]{16}$/);
        expect(first.body).to.include({ address: wallet.address, chainId: 1, created: true });
        const stored = await gw.admin('GET', `/principals/${encodeURIComponent(first.body.principalId)}`);
        expect(stored.status).to.equal(200);
        const again = await signIn(wallet, { chainId: 8453 });
        expect(again.status).to.equal(200);
        expect(again.body).to.include({ principalId: first.body.principalId, created: false });
        const other = await signIn(newWallet());
        expect(other.body.principalId).to.not.equal(first.body.principalId);
      });

      it('refuses a nonce used once already', async () => {
        const wallet = newWallet();
        const fields = await options();
        const message = siweText(wallet.address, fields);
        const signature = await wallet.signMessage({ message });
        expect((await post(auth, '/v1/siwe/verify', { message, signature })).status).to.equal(200);
        const replay = await post(auth, '/v1/siwe/verify', { message, signature });
        expect(replay.status).to.equal(400);
        expect(code(replay)).to.equal('challenge-invalid');
      });

      it('refuses a nonce it never issued', async () => {
        const r = await signIn(newWallet(), { nonce: 'abcdef0123456789abcdef0123456789' });
        expect([r.status, code(r)]).to.deep.equal([400, 'challenge-invalid']);
      });

      it('refuses a message for another domain, or naming another scheme', async () => {
        const r = await signIn(newWallet(), { domain: 'evil.example' });
        expect([r.status, code(r)]).to.deep.equal([401, 'wallet-domain-mismatch']);
        const wallet = newWallet();
        const fields = await options();
        const https = `https://${siweText(wallet.address, fields)}`;
        const s = await post(auth, '/v1/siwe/verify', { message: https, signature: await wallet.signMessage({ message: https }) });
        expect([s.status, code(s)]).to.deep.equal([401, 'wallet-domain-mismatch']);
        const http = `http://${siweText(wallet.address, fields)}`;
        const ok = await post(auth, '/v1/siwe/verify', { message: http, signature: await wallet.signMessage({ message: http }) });
        expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
      });

      it('racing first sign-ins of one address make one principal', async () => {
        const wallet = newWallet();
        const attempts = await Promise.all(
          Array.from({ length: 4 }, async () => {
            const message = siweText(wallet.address, await options());
            return post(auth, '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
          }),
        );
        expect(attempts.map((a) => a.status)).to.deep.equal([200, 200, 200, 200]);
        expect(new Set(attempts.map((a) => a.body.principalId)).size).to.equal(1);
        expect(attempts.filter((a) => a.body.created)).to.have.length(1);
      });

      it('refuses a message whose URI is off the auth origin (another host, or the API host)', async () => {
        const r = await signIn(newWallet(), { uri: 'https://evil.example/login' });
        expect([r.status, code(r)]).to.deep.equal([401, 'wallet-uri-mismatch']);
        const api = await signIn(newWallet(), { uri: gw.origins.api });
        expect(code(api)).to.equal('wallet-uri-mismatch');
      });

      it('accepts a URI on the auth origin with a path', async () => {
        const r = await signIn(newWallet(), { uri: `${gw.origins.auth}/sign-in` });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
      });

      it('refuses a chain id outside wallet.chainIds, in the message and in /v1/siwe/options', async () => {
        const r = await signIn(newWallet(), { chainId: 137 });
        expect([r.status, code(r)]).to.deep.equal([401, 'wallet-chain-not-allowed']);
        expect(r.body.error.message).to.contain('137');
        const o = await post(auth, '/v1/siwe/options', { chainId: 137 });
        expect([o.status, code(o)]).to.deep.equal([401, 'wallet-chain-not-allowed']);
      });

      it('refuses a signature by another key, and the nonce stays good for its owner', async () => {
        const wallet = newWallet();
        const fields = await options();
        const message = siweText(wallet.address, fields);
        const forged = await post(auth, '/v1/siwe/verify', { message, signature: await newWallet().signMessage({ message }) });
        expect([forged.status, code(forged)]).to.deep.equal([401, 'wallet-signature-invalid']);
        const junk = await post(auth, '/v1/siwe/verify', { message, signature: `0x${'11'.repeat(65)}` });
        expect(code(junk)).to.equal('wallet-signature-invalid');
        const real = await post(auth, '/v1/siwe/verify', { message, signature: await wallet.signMessage({ message }) });
        expect(real.status).to.equal(200);
      });

      it('refuses a message past its expiration time, and one before its not-before time', async () => {
        const past = await signIn(newWallet(), {
          issuedAt: new Date(Date.now() - 120_000).toISOString(),
          expirationTime: new Date(Date.now() - 60_000).toISOString(),
        });
        expect([past.status, code(past)]).to.deep.equal([401, 'wallet-message-expired']);
        const early = await signIn(newWallet(), { notBefore: new Date(Date.now() + 600_000).toISOString() });
        expect([early.status, code(early)]).to.deep.equal([401, 'wallet-message-not-yet-valid']);
      });

      it('refuses what is not an EIP-4361 message, and bodies of the wrong shape, by field', async () => {
        const wallet = newWallet();
        const notSiwe = await post(auth, '/v1/siwe/verify', { message: 'hello', signature: await wallet.signMessage({ message: 'hello' }) });
        expect([notSiwe.status, code(notSiwe)]).to.deep.equal([400, 'wallet-message-invalid']);
        const fields = await options();
        const v2 = siweText(wallet.address, fields).replace('Version: 1', 'Version: 2');
        expect(code(await post(auth, '/v1/siwe/verify', { message: v2, signature: await wallet.signMessage({ message: v2 }) }))).to.equal(
          'wallet-message-invalid',
        );
        const missing = await post(auth, '/v1/siwe/verify', { message: 'x' });
        expect([missing.status, code(missing)]).to.deep.equal([400, 'invalid-request']);
        expect(missing.body.error.message).to.contain('signature');
        const extra = await post(auth, '/v1/siwe/verify', { message: 'x', signature: '0x00', remember: true });
        expect(extra.body.error.message).to.contain('"remember"');
        const notHex = await post(auth, '/v1/siwe/verify', { message: 'x', signature: 'zz' });
        expect(code(notHex)).to.equal('invalid-request');
        const res = await fetch(`${auth}/v1/siwe/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: gw.origins.auth },
          body: '{',
        });
        expect(res.status).to.equal(400);
        expect(((await res.json()) as any).error.code).to.equal('invalid-json');
        expect(code(await post(auth, '/v1/siwe/nonce', { extra: 1 }))).to.equal('invalid-request');
      });

      it('refuses a sign-in POST from another site, or with no Origin at all (login CSRF), and the nonce stays good', async () => {
        const wallet = newWallet();
        const fields = await options();
        const message = siweText(wallet.address, fields);
        const signature = await wallet.signMessage({ message });
        const evil = await post(auth, '/v1/siwe/verify', { message, signature }, 'https://evil.example');
        expect([evil.status, code(evil)]).to.deep.equal([403, 'cross-site-request']);
        const bare = await fetch(`${auth}/v1/siwe/verify`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ message, signature }),
        });
        expect(bare.status).to.equal(403);
        expect(bare.headers.getSetCookie()).to.deep.equal([]);
        expect((await post(auth, '/v1/siwe/verify', { message, signature })).status).to.equal(200);
      });

      it('the link hint names the wallet methods of an account signed in with a key', async () => {
        const r = await signIn(newWallet());
        const hint = await fetch(`${auth}/v1/link/hint?id=${encodeURIComponent(r.body.principalId)}`);
        expect(await hint.json()).to.deep.equal({ methods: ['siwe', 'cacao'] });
      });

      it('answers only on the auth host', async () => {
        for (const host of ['api', 'console', 'site'] as const) {
          const r = await post(gw.urls[host], '/v1/siwe/nonce');
          expect(r.status, host).to.equal(404);
        }
        const get = await fetch(`${auth}/v1/siwe/nonce`);
        expect(get.status).to.equal(405);
      });
    });

    describe('CACAO', () => {
      const nonce = async () => (await post(auth, '/v1/siwe/nonce')).body.nonce as string;
      const site = () => ({ domain: new URL(gw.origins.auth).host, aud: gw.origins.auth });

      it('a signed CACAO for the auth origin signs in; its EOA is the same principal over SIWE', async () => {
        const wallet = newWallet();
        const cacao = await signedCacao(wallet, { ...site(), nonce: await nonce(), chainId: 1 });
        const r = await post(auth, '/v1/cacao/session', { cacao });
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        expect(r.body).to.include({ address: wallet.address, created: true });
        const viaSiwe = await signIn(wallet);
        expect(viaSiwe.body).to.include({ principalId: r.body.principalId, created: false });
      });

      it('refuses a CACAO whose audience is another origin', async () => {
        const cacao = await signedCacao(newWallet(), { ...site(), aud: 'https://evil.example', nonce: await nonce(), chainId: 1 });
        const r = await post(auth, '/v1/cacao/session', { cacao });
        expect([r.status, code(r)]).to.deep.equal([401, 'cacao-audience-mismatch']);
      });

      it('refuses a CACAO for another domain, or on a chain not accepted', async () => {
        const d = await post(auth, '/v1/cacao/session', {
          cacao: await signedCacao(newWallet(), { ...site(), domain: 'evil.example', nonce: await nonce(), chainId: 1 }),
        });
        expect(code(d)).to.equal('wallet-domain-mismatch');
        const c = await post(auth, '/v1/cacao/session', { cacao: await signedCacao(newWallet(), { ...site(), nonce: await nonce(), chainId: 137 }) });
        expect(code(c)).to.equal('wallet-chain-not-allowed');
      });

      it('refuses a CACAO signed by a key other than its issuer, then accepts the real one with the same nonce', async () => {
        const wallet = newWallet();
        const n = await nonce();
        const forged = await post(auth, '/v1/cacao/session', { cacao: await signedCacao(wallet, { ...site(), nonce: n, chainId: 1 }, newWallet()) });
        expect([forged.status, code(forged)]).to.deep.equal([401, 'wallet-signature-invalid']);
        const real = await post(auth, '/v1/cacao/session', { cacao: await signedCacao(wallet, { ...site(), nonce: n, chainId: 1 }) });
        expect(real.status).to.equal(200);
      });

      it('refuses a CACAO used once already (its nonce is spent), and one with a nonce never issued', async () => {
        const cacao = await signedCacao(newWallet(), { ...site(), nonce: await nonce(), chainId: 1 });
        expect((await post(auth, '/v1/cacao/session', { cacao })).status).to.equal(200);
        const again = await post(auth, '/v1/cacao/session', { cacao });
        expect([again.status, code(again)]).to.deep.equal([400, 'challenge-invalid']);
        const unknown = await post(auth, '/v1/cacao/session', { cacao: await signedCacao(newWallet(), { ...site(), nonce: 'abcdef0123456789', chainId: 1 }) });
        expect(code(unknown)).to.equal('challenge-invalid');
      });

      it('refuses an expired CACAO', async () => {
        const cacao = await signedCacao(newWallet(), {
          ...site(),
          nonce: await nonce(),
          chainId: 1,
          issuedAt: new Date(Date.now() - 120_000).toISOString(),
          expirationTime: new Date(Date.now() - 60_000).toISOString(),
        });
        expect(code(await post(auth, '/v1/cacao/session', { cacao }))).to.equal('wallet-message-expired');
      });

      it('refuses what is not a CACAO', async () => {
        for (const cacao of ['AAAA', Buffer.from('{"h":{"t":"eip4361"}}').toString('base64url')]) {
          const r = await post(auth, '/v1/cacao/session', { cacao });
          expect([r.status, code(r)], cacao).to.deep.equal([400, 'cacao-invalid']);
        }
        expect(code(await post(auth, '/v1/cacao/session', { cacao: 'not base64url!' }))).to.equal('invalid-request');
      });
    });
  });
}

describe('wallet sign-in: nonces outlive neither their TTL nor their instance', () => {
  const SHARED_ORIGIN = 'https://auth.portcullis.test';
  let redis: RedisServer;
  let a: TestGateway;
  let b: TestGateway;
  // Both instances run on one clock the test moves, so a nonce expires without waiting.
  let clock = Date.now();
  before(async () => {
    redis = await startRedisServer();
    const env = { PORTCULLIS_AUTH_URL: SHARED_ORIGIN };
    a = await startTestGateway({ redisUrl: redis.url, env, now: () => clock });
    b = await startTestGateway({ redisUrl: redis.url, env, now: () => clock });
  });
  after(async () => {
    await a.close();
    await b.close();
    await redis.stop();
  });

  it('a nonce one instance issued is redeemed on another, once', async () => {
    // Two instances of one deployment behind one public auth origin, sharing the Redis store.
    const wallet = newWallet();
    const fields = (await post(a.urls.auth, '/v1/siwe/options', undefined, SHARED_ORIGIN)).body as Fields;
    expect(fields.uri).to.equal(SHARED_ORIGIN);
    const message = siweText(wallet.address, fields);
    const signature = await wallet.signMessage({ message });
    const atB = await post(b.urls.auth, '/v1/siwe/verify', { message, signature }, SHARED_ORIGIN);
    expect(atB.status, JSON.stringify(atB.body)).to.equal(200);
    const backAtA = await post(a.urls.auth, '/v1/siwe/verify', { message, signature }, SHARED_ORIGIN);
    expect([backAtA.status, backAtA.body.error.code]).to.deep.equal([400, 'challenge-invalid']);
  });

  it('a nonce is refused once wallet.nonceTtlSeconds have passed, though the message itself sets no end', async () => {
    const wallet = newWallet();
    const fields = (await post(a.urls.auth, '/v1/siwe/options', undefined, SHARED_ORIGIN)).body as Fields;
    const message = siweText(wallet.address, fields, { expirationTime: null });
    const signature = await wallet.signMessage({ message });
    clock += 300_000;
    const r = await post(b.urls.auth, '/v1/siwe/verify', { message, signature }, SHARED_ORIGIN);
    expect([r.status, r.body.error.code]).to.deep.equal([400, 'challenge-invalid']);
  });
});
