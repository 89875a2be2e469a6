/**
 * A signed-in principal changes its own sign-in methods on the auth host, with its session cookie and the
 * auth page's Origin: it adds a second passkey, adds a wallet by SIWE and another by CACAO (each then signs
 * in to it, and survives the loss of the first method), removes one, and is never left without a method.
 * A key that signs in to another principal is not moved; another principal's method cannot be removed; a
 * cross-site POST and a PAT are refused. On the memory store and on a real redis-server.
 */
import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson, register } from '../helpers/passkey.js';
import { newWallet, siweText, signedCacao, type Fields } from '../helpers/wallet.js';

describe('a principal adds and removes its sign-in methods', function () {
  this.timeout(60_000);
  for (const storeKind of ['memory', 'redis'] as const) {
    describe(`${storeKind} store`, () => {
      let redis: RedisServer | null = null;
      let gw: TestGateway;
      before(async () => {
        if (storeKind === 'redis') redis = await startRedisServer();
        gw = await startTestGateway(redis ? { redisUrl: redis.url } : {});
      });
      after(async () => {
        await gw.close();
        await redis?.stop();
      });

      const person = () => new Browser(gw, gw.origins.auth);
      const methods = async (b: Browser) => (await b.get('auth', '/v1/account/sign-in-methods')).body;
      const siweProof = async (b: Browser, wallet = newWallet()) => {
        const message = siweText(wallet.address, (await b.post('auth', '/v1/siwe/options')).body as Fields);
        return { message, signature: await wallet.signMessage({ message }) };
      };
      const cacaoProof = async (b: Browser, wallet = newWallet()) => {
        const { nonce } = (await b.post('auth', '/v1/siwe/nonce')).body as { nonce: string };
        return { cacao: await signedCacao(wallet, { domain: new URL(gw.origins.auth).host, aud: gw.origins.auth, nonce, chainId: 1 }) };
      };
      const siweSignIn = async (wallet: ReturnType<typeof newWallet>) => {
        const b = person();
        return (await b.post('auth', '/v1/siwe/verify', await siweProof(b, wallet))).body;
      };

      it('adds a second passkey and a wallet (SIWE, CACAO); each signs in to the same principal', async () => {
        const b = person();
        const { principalId } = await newPerson(b);
        // A second passkey, added within the session.
        const second = await register(b, new (await import('../helpers/passkey.js')).SoftAuthenticator());
        expect(second.verify.status, JSON.stringify(second.verify.body)).to.equal(200);
        expect(second.verify.body).to.include({ principalId, created: false });
        // A wallet by SIWE, another by CACAO.
        const eoa = newWallet();
        const added = await b.post('auth', '/v1/account/wallets/siwe', await siweProof(b, eoa));
        expect(added.status, JSON.stringify(added.body)).to.equal(200);
        expect(added.body).to.deep.include({ linked: true, id: `eoa:${eoa.address.toLowerCase()}`, methods: ['siwe', 'cacao'] });
        const did = newWallet();
        const viaCacao = await b.post('auth', '/v1/account/wallets/cacao', await cacaoProof(b, did));
        expect(viaCacao.status, JSON.stringify(viaCacao.body)).to.equal(200);
        const m = await methods(b);
        expect(m.passkeys).to.have.length(2);
        expect(m.wallets.map((w: any) => w.id)).to.have.members([`eoa:${eoa.address.toLowerCase()}`, `eoa:${did.address.toLowerCase()}`]);
        // Each wallet now signs in to this principal, not to a new one.
        expect(await siweSignIn(eoa)).to.include({ principalId, created: false });
        expect(await siweSignIn(did)).to.include({ principalId, created: false });
        // Adding the same key again changes nothing.
        expect((await b.post('auth', '/v1/account/wallets/siwe', await siweProof(b, eoa))).status).to.equal(200);
        expect((await methods(b)).wallets).to.have.length(2);
      });

      it('removes a passkey and a wallet, never the last method; the wallet left keeps the account', async () => {
        const b = person();
        const { a, principalId } = await newPerson(b);
        const eoa = newWallet();
        expect((await b.post('auth', '/v1/account/wallets/siwe', await siweProof(b, eoa))).status).to.equal(200);
        const passkeyId = (await methods(b)).passkeys[0].id as string;
        // The passkey goes: the wallet is the account now (the passkey signs in to nothing).
        const removed = await b.post('auth', '/v1/account/sign-in-methods/remove', { passkey: passkeyId });
        expect(removed.status, JSON.stringify(removed.body)).to.equal(200);
        expect(removed.body.passkeys).to.deep.equal([]);
        expect((await login(person(), a)).verify.status).to.not.equal(200);
        expect(await siweSignIn(eoa)).to.include({ principalId });
        // The wallet is the last method: it stays.
        const last = await b.post('auth', '/v1/account/sign-in-methods/remove', { wallet: `eoa:${eoa.address.toLowerCase()}` });
        expect([last.status, last.body.error?.code]).to.deep.equal([409, 'last-sign-in-method']);
        // With a new wallet added, the old one can go; it then signs in to a new principal of its own.
        const next = newWallet();
        expect((await b.post('auth', '/v1/account/wallets/cacao', await cacaoProof(b, next))).status).to.equal(200);
        expect((await b.post('auth', '/v1/account/sign-in-methods/remove', { wallet: `eoa:${eoa.address.toLowerCase()}` })).status).to.equal(200);
        expect((await methods(b)).wallets.map((w: any) => w.id)).to.deep.equal([`eoa:${next.address.toLowerCase()}`]);
        expect(await siweSignIn(next)).to.include({ principalId, created: false });
        const orphan = await siweSignIn(eoa);
        expect(orphan.created).to.equal(true);
        expect(orphan.principalId).to.not.equal(principalId);
      });

      it('of two removals racing to take the last two methods, one stands and the other is refused: one method stays', async () => {
        // Six rounds each of a passkey against a wallet, and of the last two passkeys against each other.
        for (let round = 0; round < 6; round++) {
          const b = person();
          await newPerson(b);
          const eoa = newWallet();
          await b.post('auth', '/v1/account/wallets/siwe', await siweProof(b, eoa));
          const passkeyId = (await methods(b)).passkeys[0].id as string;
          const mixed = await Promise.all([
            b.post('auth', '/v1/account/sign-in-methods/remove', { passkey: passkeyId }),
            b.post('auth', '/v1/account/sign-in-methods/remove', { wallet: `eoa:${eoa.address.toLowerCase()}` }),
          ]);
          expect(mixed.map((r) => r.status).sort(), `round ${round}`).to.deep.equal([200, 409]);
          const left = await methods(b);
          expect(left.passkeys.length + left.wallets.length).to.equal(1);

          const c = person();
          await newPerson(c);
          await register(c, new (await import('../helpers/passkey.js')).SoftAuthenticator());
          const ids = ((await methods(c)).passkeys as Array<{ id: string }>).map((p) => p.id);
          expect(ids).to.have.length(2);
          const twoPasskeys = await Promise.all(ids.map((id) => c.post('auth', '/v1/account/sign-in-methods/remove', { passkey: id })));
          expect(twoPasskeys.map((r) => r.status).sort(), `round ${round}`).to.deep.equal([200, 409]);
          expect(twoPasskeys.find((r) => r.status === 409)!.body.error.code).to.equal('last-sign-in-method');
          expect((await methods(c)).passkeys).to.have.length(1);
        }
      });

      it("does not move a key of another principal, nor remove another principal's method; refuses cross-site and PAT", async () => {
        const owner = newWallet();
        const theirs = await siweSignIn(owner);
        const b = person();
        await newPerson(b);
        const moved = await b.post('auth', '/v1/account/wallets/siwe', await siweProof(b, owner));
        expect([moved.status, moved.body.error?.code]).to.deep.equal([409, 'wallet-linked-elsewhere']);
        expect(await siweSignIn(owner)).to.include({ principalId: theirs.principalId });
        const notMine = await b.post('auth', '/v1/account/sign-in-methods/remove', { wallet: `eoa:${owner.address.toLowerCase()}` });
        expect([notMine.status, notMine.body.error?.code]).to.deep.equal([404, 'sign-in-method-not-found']);
        const both = await b.post('auth', '/v1/account/sign-in-methods/remove', { passkey: 'x', wallet: `eoa:${owner.address.toLowerCase()}` });
        expect([both.status, both.body.error?.code]).to.deep.equal([400, 'invalid-request']);
        // A page on another site cannot add a wallet with the visitor's cookie.
        const proof = await siweProof(b);
        b.origin = 'https://evil.example';
        const forged = await b.post('auth', '/v1/account/wallets/siwe', proof);
        expect([forged.status, forged.body.error?.code]).to.deep.equal([403, 'cross-site-request']);
        b.origin = gw.origins.auth;
        expect((await b.post('auth', '/v1/account/wallets/siwe', proof)).status).to.equal(200);
        // Without a session: 401; with a PAT: 403.
        const anon = await person().post('auth', '/v1/account/sign-in-methods/remove', { wallet: `eoa:${owner.address.toLowerCase()}` });
        expect(anon.status).to.equal(401);
        const p = await gw.principal();
        const pat = await person().post('auth', '/v1/account/wallets/siwe', await siweProof(person()), { authorization: `Bearer ${p.token}` });
        expect([pat.status, pat.body.error?.code]).to.deep.equal([403, 'pat-not-accepted']);
        // No identity provider configured: linking one answers 503, and the account names none.
        const idp = await b.post('auth', '/v1/account/identity-provider/start', {});
        expect([idp.status, idp.body.error?.code]).to.deep.equal([503, 'identity-provider-not-configured']);
        expect((await methods(b)).identityProvider).to.equal(null);
      });
    });
  }
});
