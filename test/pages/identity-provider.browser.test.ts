/**
 * Linking an OpenID Connect identity names an account that one of its own methods proves, in a real
 * browser (Chromium) against a real OIDC provider (oidc-provider, pinned, on loopback, with its development
 * login and consent pages): a person signed in with a passkey starts the link, signs in at the provider,
 * consents, and comes back to the console; the account then carries the provider's issuer, subject, name
 * and verified e-mail. The same identity cannot name a second account; a callback with a state this
 * session did not start changes nothing; the link is not a sign-in method.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import Provider from 'oidc-provider';
import { startTestGateway, REPO, type TestGateway } from '../helpers/gateway.js';
import { launchBrowser, openPage, screenshotOnFailure, type BrowserPage } from '../helpers/chromium.js';
import { freePort } from '../helpers/ports.js';

const CLIENT_ID = 'portcullis-test';
const CLIENT_SECRET = 'a-test-client-secret-of-some-length';

describe('identity-provider link (Chromium, oidc-provider)', function () {
  this.timeout(90_000);
  let gw: TestGateway;
  let browser: Browser;
  let bp: BrowserPage;
  let idp: Server;
  let issuer: string;

  before(async () => {
    execFileSync(process.execPath, [join(REPO, 'scripts/web-build.mjs')], { stdio: 'inherit' });
    const port = await freePort();
    issuer = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      env: { PORTCULLIS_OIDC_ISSUER: issuer, PORTCULLIS_OIDC_CLIENT_ID: CLIENT_ID, PORTCULLIS_OIDC_CLIENT_SECRET: CLIENT_SECRET },
    });
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: [`${gw.origins.auth}/v1/account/identity-provider/callback`],
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'] },
      async findAccount(_ctx: unknown, id: string) {
        return { accountId: id, claims: async () => ({ sub: id, email: `${id}@idp.test`, email_verified: true, preferred_username: id }) };
      },
      cookies: { keys: ['a-test-cookie-key'] },
    });
    idp = provider.listen(port);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await new Promise((r) => idp?.close(r));
  });
  beforeEach(async () => {
    bp = await openPage(browser);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await screenshotOnFailure(bp.page, this.currentTest.fullTitle());
    await bp.context.close();
  });

  async function createAccount(): Promise<string> {
    const { page } = bp;
    await page.goto(`${gw.origins.auth}/sign-in?return=${encodeURIComponent(`${gw.origins.console}/`)}`);
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.waitForURL(`${gw.origins.console}/`);
    return (await page.locator('#principal-id').textContent())!;
  }
  const start = async () => {
    const r = await bp.context.request.post(`${gw.origins.auth}/v1/account/identity-provider/start`, {
      headers: { origin: gw.origins.auth, 'content-type': 'application/json' },
      data: {},
    });
    expect(r.status(), await r.text()).to.equal(200);
    return ((await r.json()) as { url: string }).url;
  };
  /** Signs in at the provider as `login` and consents; answers the gateway's answer to the callback. */
  const atProvider = async (url: string, login: string) => {
    const { page } = bp;
    await page.goto(url);
    await page.locator('input[name=login]').fill(login);
    await page.locator('input[name=password]').fill('any');
    const callback = page.waitForResponse((r) => r.url().startsWith(`${gw.origins.auth}/v1/account/identity-provider/callback`));
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    return callback;
  };
  const methods = async () => await (await bp.context.request.get(`${gw.origins.auth}/v1/account/sign-in-methods`)).json();

  it('a passkey-signed-in account is named by the provider identity it links, and lands on the console', async () => {
    const id = await createAccount();
    expect((await methods()).identityProvider).to.equal(null);
    const url = new URL(await start());
    expect(url.origin).to.equal(issuer);
    expect(url.searchParams.get('code_challenge_method')).to.equal('S256');
    const answer = await atProvider(url.href, 'ada');
    expect(answer.status()).to.equal(303);
    await bp.page.waitForURL(`${gw.origins.console}/#security`);
    const m = await methods();
    expect(m.principalId).to.equal(id);
    expect(m.identityProvider).to.deep.include({ issuer, subject: 'ada', name: 'ada', email: 'ada@idp.test' });
    // It names the account; it is not a way in.
    const hint = (await (await fetch(`${gw.urls.auth}/v1/link/hint?id=${encodeURIComponent(id)}`)).json()) as { methods: string[] };
    expect(hint.methods).to.deep.equal(['passkey']);
  });

  it('the same identity cannot name a second account; a state this session did not start is refused', async () => {
    await createAccount();
    const answer = await atProvider(await start(), 'ada');
    expect(answer.status()).to.equal(409);
    expect((await answer.json()).error.code).to.equal('identity-linked-elsewhere');
    expect((await methods()).identityProvider).to.equal(null);
    const forged = await bp.context.request.get(`${gw.origins.auth}/v1/account/identity-provider/callback?code=x&state=not-ours`);
    expect(forged.status()).to.equal(400);
    expect((await forged.json()).error.code).to.equal('challenge-invalid');
    // Without a session, nothing starts.
    const anon = await fetch(`${gw.urls.auth}/v1/account/identity-provider/start`, {
      method: 'POST',
      headers: { origin: gw.origins.auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anon.status).to.equal(401);
  });
});
