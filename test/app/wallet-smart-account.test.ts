/**
 * Smart-account sign-in end to end: a real local EVM node (anvil from npm, chain id 8453) holds a
 * passkey-owned ERC-1271 account (compiled with solc from npm; the passkey is a software P-256 key making
 * real WebAuthn assertions). The gateway checks signatures with viem against that node, over HTTP. Covered:
 * a deployed account; an undeployed one whose signature is wrapped as ERC-6492; an account that signs with
 * chainId 1; another passkey's signature; a reused nonce; and a node that is missing, down, or on another
 * chain. On the memory store and on a real redis-server.
 */
import { expect } from 'chai';
import { Browser } from '../helpers/browser.js';
import { startRecovery } from '../helpers/recovery.js';
import { newPhrase, recoveryKey } from '../../src/recovery/phrase.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { deployFactory, SoftwarePasskey } from '../helpers/passkey-account.js';
import { freePort } from '../helpers/ports.js';
import { newWallet, post, siweText, type Fields } from '../helpers/wallet.js';

const code = (r: { body: any }) => r.body?.error?.code;

describe('wallet sign-in: passkey-owned smart account on a local chain 8453', function () {
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
      let auth: string;
      before(async () => {
        if (storeKind === 'redis') redis = await startRedisServer();
        gw = await startTestGateway({ ...(redis ? { redisUrl: redis.url } : {}), env: { PORTCULLIS_SMART_ACCOUNT_RPC_URL: node.url } });
        auth = gw.urls.auth;
      });
      after(async () => {
        await gw.close();
        await redis?.stop();
      });

      const newAccount = () => factory.account(new SoftwarePasskey(new URL(gw.origins.auth).hostname, gw.origins.auth));
      const options = async (): Promise<Fields> => {
        const r = await post(auth, '/v1/passkey/smart-account/options');
        expect(r.status, JSON.stringify(r.body)).to.equal(200);
        return r.body as Fields;
      };

      it('options answer the SIWE fields on chain 8453 for this auth host', async () => {
        const f = await options();
        expect(f).to.include({ chainId: 8453, domain: new URL(gw.origins.auth).host, uri: gw.origins.auth, version: '1' });
        expect(f.nonce).to.match(/^[A-Za-z0-9]{8,}$/);
      });

      it('a smart-account sign-in ends a recovery of its account under way, and tells the owner', async () => {
        const account = newAccount();
        await account.deploy();
        const signIn = async (b: Browser) => {
          const fields = (await b.post('auth', '/v1/passkey/smart-account/options')).body as Fields;
          const message = siweText(account.address, fields);
          return b.post('auth', '/v1/passkey/smart-account/verify', { message, signature: account.signMessage(message) });
        };
        const b = new Browser(gw, gw.origins.auth);
        expect((await signIn(b)).status).to.equal(200);
        const phrase = newPhrase();
        const secret = (await b.post('auth', '/v1/recovery/setup', { publicKey: recoveryKey(phrase).publicKey })).body.recoverySecret as string;
        expect((await startRecovery(new Browser(gw, gw.origins.auth), phrase, secret)).status).to.equal(202);
        const owner = new Browser(gw, gw.origins.auth);
        expect((await signIn(owner)).status).to.equal(200);
        const status = await owner.get('auth', '/v1/recovery');
        expect(status.body.pending).to.equal(null);
        expect(status.body.cancelled).to.include({ by: 'smart-account' });
      });

      it('a deployed account signs in (ERC-1271, bare or still ERC-6492-wrapped): a new principal first, the same one after', async () => {
        const account = newAccount();
        await account.deploy();
        const message = siweText(account.address, await options());
        const first = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: account.signMessage(message) });
        expect(first.status, JSON.stringify(first.body)).to.equal(200);
        expect(first.body).to.include({ address: account.address, chainId: 8453, created: true });
        expect(first.body.principalId).to.match(/^did:web:portcullis\.localhost:tenant:/);
        const again = siweText(account.address, await options());
        const second = await post(auth, '/v1/passkey/smart-account/verify', { message: again, signature: account.signMessage(again) });
        expect(second.body).to.include({ principalId: first.body.principalId, created: false });
        const hint = await fetch(`${auth}/v1/link/hint?id=${encodeURIComponent(first.body.principalId)}`);
        expect(await hint.json()).to.deep.equal({ methods: ['smart-account'] });
        // A wallet that keeps wrapping its signatures as ERC-6492 after deployment still signs in.
        const third = siweText(account.address, await options());
        const wrapped = await post(auth, '/v1/passkey/smart-account/verify', { message: third, signature: account.signMessageUndeployed(third) });
        expect(wrapped.status, JSON.stringify(wrapped.body)).to.equal(200);
        expect(wrapped.body).to.include({ principalId: first.body.principalId, created: false });
      });

      it('an account not deployed yet signs in with an ERC-6492 signature; the bare ERC-1271 one is refused', async () => {
        const account = newAccount();
        const fields = await options();
        const message = siweText(account.address, fields);
        const bare = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: account.signMessage(message) });
        expect([bare.status, code(bare)]).to.deep.equal([401, 'wallet-signature-invalid']);
        const wrapped = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: account.signMessageUndeployed(message) });
        expect(wrapped.status, JSON.stringify(wrapped.body)).to.equal(200);
        expect(wrapped.body).to.include({ address: account.address, created: true });
      });

      it('refuses an account that signs with chainId 1', async () => {
        const account = newAccount();
        await account.deploy();
        const message = siweText(account.address, await options(), { chainId: 1 });
        const r = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: account.signMessage(message) });
        expect([r.status, code(r)]).to.deep.equal([401, 'wallet-chain-not-allowed']);
        expect(r.body.error.message).to.contain('8453');
      });

      it("refuses another passkey's signature, then accepts the owner's with the same nonce", async () => {
        const account = newAccount();
        await account.deploy();
        const message = siweText(account.address, await options());
        const forged = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: newAccount().signMessage(message) });
        expect([forged.status, code(forged)]).to.deep.equal([401, 'wallet-signature-invalid']);
        const real = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: account.signMessage(message) });
        expect(real.status).to.equal(200);
      });

      it('refuses a reused nonce, and a SIWE nonce (each method redeems only its own)', async () => {
        const account = newAccount();
        await account.deploy();
        const message = siweText(account.address, await options());
        const signature = account.signMessage(message);
        expect((await post(auth, '/v1/passkey/smart-account/verify', { message, signature })).status).to.equal(200);
        const replay = await post(auth, '/v1/passkey/smart-account/verify', { message, signature });
        expect([replay.status, code(replay)]).to.deep.equal([400, 'challenge-invalid']);
        const siweFields = { ...(await options()), nonce: (await post(auth, '/v1/siwe/nonce')).body.nonce as string };
        const crossed = siweText(account.address, siweFields);
        const r = await post(auth, '/v1/passkey/smart-account/verify', { message: crossed, signature: account.signMessage(crossed) });
        expect(code(r)).to.equal('challenge-invalid');
      });

      it('refuses a message for another domain or URI before asking the chain', async () => {
        const account = newAccount();
        const fields = await options();
        const d = siweText(account.address, fields, { domain: 'evil.example' });
        expect(code(await post(auth, '/v1/passkey/smart-account/verify', { message: d, signature: account.signMessage(d) }))).to.equal(
          'wallet-domain-mismatch',
        );
        const u = siweText(account.address, fields, { uri: 'https://evil.example' });
        expect(code(await post(auth, '/v1/passkey/smart-account/verify', { message: u, signature: account.signMessage(u) }))).to.equal('wallet-uri-mismatch');
      });

      it('an EOA is not a smart account of the same address: SIWE and smart-account principals stay apart', async () => {
        const wallet = newWallet();
        const message = siweText(wallet.address, await options());
        const viaSmart = await post(auth, '/v1/passkey/smart-account/verify', { message, signature: await wallet.signMessage({ message }) });
        expect(viaSmart.status, JSON.stringify(viaSmart.body)).to.equal(200);
        const siwe = (await post(auth, '/v1/siwe/options')).body as Fields;
        const m2 = siweText(wallet.address, siwe);
        const viaSiwe = await post(auth, '/v1/siwe/verify', { message: m2, signature: await wallet.signMessage({ message: m2 }) });
        expect(viaSiwe.body.principalId).to.not.equal(viaSmart.body.principalId);
      });
    });
  }

  describe('when the chain cannot be asked', () => {
    it('answers 503 smart-account-unavailable without a configured node, before a nonce is handed out', async () => {
      const gw = await startTestGateway();
      try {
        const r = await post(gw.urls.auth, '/v1/passkey/smart-account/options');
        expect([r.status, code(r)]).to.deep.equal([503, 'smart-account-unavailable']);
      } finally {
        await gw.close();
      }
    });

    it('answers 503 when the node is down, and the nonce is not spent: an instance whose node is up redeems it', async () => {
      // Two instances of one deployment (one public auth origin, one Redis store); one has lost its node.
      const redis = await startRedisServer();
      const origin = 'https://auth.portcullis.test';
      const down = `http://127.0.0.1:${await freePort()}`;
      const gwDown = await startTestGateway({ redisUrl: redis.url, env: { PORTCULLIS_SMART_ACCOUNT_RPC_URL: down, PORTCULLIS_AUTH_URL: origin } });
      const gwUp = await startTestGateway({ redisUrl: redis.url, env: { PORTCULLIS_SMART_ACCOUNT_RPC_URL: node.url, PORTCULLIS_AUTH_URL: origin } });
      try {
        const account = factory.account(new SoftwarePasskey('auth.portcullis.test', origin));
        await account.deploy();
        const message = siweText(account.address, (await post(gwDown.urls.auth, '/v1/passkey/smart-account/options', undefined, origin)).body as Fields);
        const signature = account.signMessage(message);
        const r = await post(gwDown.urls.auth, '/v1/passkey/smart-account/verify', { message, signature }, origin);
        expect([r.status, code(r)]).to.deep.equal([503, 'smart-account-unavailable']);
        const up = await post(gwUp.urls.auth, '/v1/passkey/smart-account/verify', { message, signature }, origin);
        expect(up.status, JSON.stringify(up.body)).to.equal(200);
      } finally {
        await gwDown.close();
        await gwUp.close();
        await redis.stop();
      }
    });

    it('answers 503 when the node serves another chain (a mainnet node configured by mistake)', async () => {
      const mainnet = await startAnvil(1);
      const gw = await startTestGateway({ env: { PORTCULLIS_SMART_ACCOUNT_RPC_URL: mainnet.url } });
      try {
        const account = factory.account(new SoftwarePasskey('localhost', gw.origins.auth));
        const message = siweText(account.address, (await post(gw.urls.auth, '/v1/passkey/smart-account/options')).body as Fields);
        const r = await post(gw.urls.auth, '/v1/passkey/smart-account/verify', { message, signature: account.signMessageUndeployed(message) });
        expect([r.status, code(r)]).to.deep.equal([503, 'smart-account-unavailable']);
        expect(r.body.error.message).to.contain('chain 1');
      } finally {
        await gw.close();
        await mainnet.stop();
      }
    });
  });
});
