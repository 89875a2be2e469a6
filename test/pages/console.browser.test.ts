/**
 * The pages a person uses, in a real browser: Debian's Chromium driven by playwright-core, with Chromium's
 * virtual WebAuthn authenticator. A person creates an account with a passkey, signs out and in again,
 * issues a token and reads it once, calls the chat API with it, revokes it and sees the call refused, and
 * enrols TOTP and signs in with a code. Every page passes axe-core with no serious or critical violation
 * and reports no Content-Security-Policy violation.
 *
 * The gateway runs in-process on the memory store with the demo upstream; the pages are built first
 * (scripts/web-build.mjs). A failing test leaves a screenshot in test/artifacts/.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startTestGateway, REPO, type TestGateway } from '../helpers/gateway.js';
import { launchBrowser, openPage, screenshotOnFailure, seriousViolations, type BrowserPage } from '../helpers/chromium.js';
import { startStripeMock, deliver, event, type StripeMock } from '../helpers/stripe-mock.js';
import { codeAt } from '../../src/totp/codes.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

/** The gateway's clock runs `skew` ms ahead of the machine's, so a test can step past a TOTP time step. */
let skew = 0;
const now = () => Date.now() + skew;

describe('pages in a real browser (Chromium, virtual passkey authenticator)', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let browser: Browser;
  let bp: BrowserPage;
  let stripe: StripeMock;

  before(async () => {
    execFileSync(process.execPath, [join(REPO, 'scripts/web-build.mjs')], { stdio: 'inherit' });
    stripe = await startStripeMock();
    gw = await startTestGateway({ now, env: stripe.env });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await stripe?.stop();
  });
  beforeEach(async () => {
    bp = await openPage(browser);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await screenshotOnFailure(bp.page, this.currentTest.fullTitle());
    expect(bp.cspViolations, 'Content-Security-Policy violations').to.deep.equal([]);
    await bp.context.close();
  });

  /** Creates an account with a passkey on the sign-in page and lands on the console. */
  async function createAccount(): Promise<string> {
    const { page } = bp;
    await page.goto(`${gw.origins.auth}/sign-in?return=${encodeURIComponent(`${gw.origins.console}/`)}`);
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.waitForURL(`${gw.origins.console}/`);
    const id = (await page.locator('#principal-id').textContent())!;
    expect(id).to.match(/^did:web:[^:]+:tenant:/);
    return id;
  }

  it('sends a visitor without a session from the console to the sign-in page, and back after signing in', async () => {
    const { page } = bp;
    await page.goto(`${gw.origins.console}/#tokens`);
    await page.waitForURL((url) => url.href.startsWith(`${gw.origins.auth}/sign-in`));
    expect(new URL(page.url()).searchParams.get('return')).to.equal(`${gw.origins.console}/#tokens`);
    expect(await seriousViolations(page), 'sign-in page accessibility').to.deep.equal([]);
  });

  it('never redirects to a return address outside the deployment', async () => {
    const { page } = bp;
    await page.goto(`${gw.origins.auth}/sign-in?return=${encodeURIComponent('https://evil.example/steal')}`);
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    await page.waitForURL(`${gw.origins.console}/`);
  });

  it('creates an account with a passkey, signs out, and signs in again with the same passkey', async () => {
    const { page } = bp;
    const id = await createAccount();
    expect(await seriousViolations(page), 'console home accessibility').to.deep.equal([]);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${gw.origins.auth}/sign-in`));
    const session = await page.evaluate(async () => (await fetch('/v1/session')).json());
    expect(session).to.deep.equal({ valid: false });
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(`${gw.origins.console}/`);
    expect(await page.locator('#principal-id').textContent()).to.equal(id);
  });

  it('issues a token shown once, which calls the chat API until it is revoked in the console', async () => {
    const { page } = bp;
    await createAccount();
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel(/^Label/).fill('laptop agent');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const token = await page.locator('#token-value').inputValue();
    expect(token).to.match(/^pcl_pat_/);
    expect(await page.locator('#token-export').inputValue()).to.equal(`export OPENAI_BASE_URL=${gw.origins.api}/v1 OPENAI_API_KEY=${token}`);
    expect(await seriousViolations(page), 'tokens page accessibility').to.deep.equal([]);

    const chat = () => gw.chat(token, { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'review this diff' }] });
    expect((await chat()).status).to.equal(200);

    // Shown once: after a reload the list has the label, never the token.
    await page.reload();
    await expectText(page, '#token-list', 'laptop agent');
    expect(await page.content()).not.to.contain(token);

    await page.getByRole('button', { name: 'Revoke laptop agent' }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expectText(page, '#token-list', 'revoked');
    const refused = await chat();
    expect(refused.status).to.equal(401);
    expect(refused.body.error.code).to.equal('token-revoked');
  });

  /** Fetches an API route as the signed-in person, from the console page (cookie, credentialed CORS). */
  async function api(path: string): Promise<any> {
    return bp.page.evaluate(async ([base, p]) => (await fetch(`${base}${p}`, { credentials: 'include' })).json(), [gw.origins.api, path] as const);
  }

  it('starts card verification at the processor, and shows the principal eligible after the signed webhook', async () => {
    const { page } = bp;
    const id = await createAccount();
    expect(await page.locator('#research-status').textContent()).to.equal(
      'Red-team models open once you verify a card. It is registered, never charged. verification-required',
    );
    await page.getByRole('link', { name: 'Verify a card' }).click();
    await page.locator('#ekyc-state').waitFor();
    expect(await seriousViolations(page), 'verification page accessibility').to.deep.equal([]);
    // The processor's hosted page is Stripe's, not ours: the browser is only seen going there.
    await page.route('https://checkout.stripe.com/**', (route) =>
      route.fulfill({ contentType: 'text/html', body: '<title>processor</title><p>hosted setup page</p>' }),
    );
    await page.getByRole('button', { name: 'Verify a card (L1)' }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.com\//);

    // The person comes back; the processor tells the gateway through its signed webhook.
    await page.goto(`${gw.origins.console}/#verification`);
    await expectText(page, '#ekyc-state', 'pending');
    const status = await api('/v1/research/ekyc/status');
    const sessionId = status.checks.card.evidenceRef as string;
    const done = await deliver(
      gw.apiUrl,
      event('checkout.session.completed', {
        id: sessionId,
        object: 'checkout.session',
        mode: 'setup',
        status: 'complete',
        client_reference_id: id,
        customer: 'cus_browser',
        metadata: { principalId: id, sku: 'card-verification', requestId: 'browser' },
        setup_intent: 'seti_123',
      }),
    );
    expect(done.status).to.equal(200);
    await page.goto(`${gw.origins.console}/#home`);
    await expectText(page, '#research-status', 'Eligible: you can call red-team models.');
    await expectText(page, '#rung', 'card (L1)');
    await expectText(page, '#scopes', 'code-review');
  });

  it('enrols TOTP with a QR code and recovery codes shown once, then signs in with a passkey and a code', async () => {
    const { page } = bp;
    const id = await createAccount();
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = (await page.locator('#totp-secret').textContent())!;
    expect(await page.getByRole('img', { name: 'QR code for your authenticator app' }).getAttribute('src')).to.match(/^data:image\/png;base64,/);
    await page.getByLabel('The 6-digit code your app shows now').fill(codeAt(secret, now()));
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    const codes = await page.locator('#recovery-codes li').allTextContents();
    expect(codes.length).to.be.above(4);
    expect(await seriousViolations(page), 'security page accessibility').to.deep.equal([]);

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${gw.origins.auth}/sign-in`));
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.getByLabel(/6-digit code/).waitFor();
    expect(await seriousViolations(page), 'two-factor prompt accessibility').to.deep.equal([]);
    skew += 30_000; // a code works once: the next one is a time step later
    await page.getByLabel(/6-digit code/).fill(codeAt(secret, now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${gw.origins.console}/`);
    expect(await page.locator('#principal-id').textContent()).to.equal(id);
    await page.getByRole('link', { name: 'Security' }).click();
    await expectText(page, '#totp-state', 'on');
  });

  it("shows billing, usage and the day's receipts from the API, each page accessible", async () => {
    const { page } = bp;
    await createAccount();
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByLabel(/^Label/).fill('chart');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const token = await page.locator('#token-value').inputValue();
    for (let i = 0; i < 3; i++) {
      expect((await gw.chat(token, { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: `call ${i}` }] })).status).to.equal(200);
    }
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.locator('#catalog').waitFor();
    expect(await page.locator('#catalog tbody tr').count()).to.be.above(3);
    expect(await page.locator('#receipts tbody tr').count()).to.equal(3);
    const href = await page.locator('#receipts a').first().getAttribute('href');
    expect(href).to.match(new RegExp(`^${gw.origins.api}/v1/receipts/rcpt_`));
    expect(await seriousViolations(page), 'billing page accessibility').to.deep.equal([]);

    await page.getByRole('link', { name: 'Usage' }).click();
    await page.locator('#usage-chart').waitFor();
    expect(await page.locator('#usage-table tbody tr th').allTextContents()).to.deep.equal(['shared-general-a']);
    expect(await page.locator('#usage-table tbody tr td').first().textContent()).to.equal('3');
    expect(await seriousViolations(page), 'usage page accessibility').to.deep.equal([]);
  });

  it('signs in with an injected Ethereum wallet (SIWE), the same principal each time', async () => {
    const { page } = bp;
    // A wallet as an extension injects it: window.ethereum (EIP-1193), its key held outside the page.
    const account = privateKeyToAccount(generatePrivateKey());
    await page.exposeFunction('walletSign', (message: string) => account.signMessage({ message }));
    await page.addInitScript((address: string) => {
      (globalThis as any).ethereum = {
        async request({ method, params }: { method: string; params?: unknown[] }) {
          if (method === 'eth_requestAccounts') return [address];
          if (method === 'eth_chainId') return '0x2105'; // Base, 8453
          if (method === 'personal_sign') return (globalThis as any).walletSign((params as string[])[0]);
          throw new Error(`unsupported ${method}`);
        },
      };
    }, account.address);
    const signIn = async () => {
      await page.goto(`${gw.origins.auth}/sign-in`);
      await page.getByRole('button', { name: 'Sign in with a wallet' }).click();
      await page.waitForURL(`${gw.origins.console}/`);
      return page.locator('#principal-id').textContent();
    };
    const first = await signIn();
    expect(first).to.match(/^did:web:/);
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${gw.origins.auth}/sign-in`));
    expect(await signIn()).to.equal(first);
  });

  it('sets up recovery in the console, then recovers the account from the sign-in page after the delay', async () => {
    const { page } = bp;
    const id = await createAccount();
    await page.getByRole('link', { name: 'Security' }).click();
    await page.getByRole('button', { name: 'Set up recovery' }).click();
    const phrase = (await page.locator('#recovery-phrase-shown').textContent())!;
    const secret = (await page.locator('#recovery-secret-shown').textContent())!;
    expect(phrase.split(' ')).to.have.length(12);
    expect(await seriousViolations(page), 'security page with recovery accessibility').to.deep.equal([]);

    // Every sign-in method lost: a new browser profile, with no passkey and no cookie.
    await bp.context.close();
    bp = await openPage(browser);
    const fresh = bp.page;
    await fresh.goto(`${gw.origins.auth}/sign-in`);
    await fresh.getByText('Recover the account').click();
    await fresh.getByLabel(/^Recovery phrase/).fill(phrase);
    await fresh.getByLabel(/^One-time recovery secret/).fill(secret);
    await fresh.getByRole('button', { name: 'Start recovery' }).click();
    await expectText(fresh, '#recovery-result', 'Recovery started');
    expect(fresh.url()).not.to.contain(encodeURIComponent(phrase.split(' ')[0]!)); // nothing went into the address

    // Too early: the server holds it for its delay (48 hours), then completing it signs in.
    await fresh.getByLabel(/^Recovery phrase/).fill(phrase);
    await fresh.getByRole('button', { name: 'Complete recovery' }).click();
    await expectText(fresh, '#error', 'recovery-not-ready');
    skew += 48 * 3_600_000 + 60_000;
    await fresh.getByRole('button', { name: 'Complete recovery' }).click();
    await fresh.waitForURL(`${gw.origins.console}/#security`);
    await fresh.getByRole('button', { name: 'Add a passkey on this device' }).click();
    await fresh.locator('#passkeys tbody tr').nth(1).waitFor();
    await fresh.getByRole('link', { name: 'Home' }).click();
    expect(await fresh.locator('#principal-id').textContent()).to.equal(id);
  });

  it('applies for a research scope under the AUP in force, and opens checkout and the customer portal at the processor', async () => {
    const { page } = bp;
    await createAccount();
    await page.getByRole('link', { name: 'Verification' }).click();
    await page.getByLabel('Scope id').fill('triage');
    await page.getByLabel('Tasks (comma-separated)').fill('vulnerability-triage');
    await page.getByLabel(/^Target/).fill('github.com/example/service');
    await page.getByLabel('Purpose').fill('Triage of the findings of our own service before release.');
    await page.getByLabel(/^I accept the acceptable-use policy/).check();
    await page.getByLabel(/^I understand the service runs no tools/).check();
    await page.getByRole('button', { name: 'Submit application' }).click();
    await expectText(page, '#application-result', 'Application sent for scope triage: it is waiting for review');
    const status = await api('/v1/research/status');
    const scope = status.scopes.find((s: { id: string }) => s.id === 'triage');
    expect(scope).to.deep.include({ status: 'pending', tasks: ['vulnerability-triage'] });
    expect(scope.applicationId).to.match(/^app_/);
    expect(await page.locator(`#applications tr[data-application-id="${scope.applicationId}"]`).count()).to.equal(1);

    // Buying and managing billing happen on the processor's hosted pages: the browser is seen going there.
    await page.route(/^https:\/\//, (route) => route.fulfill({ contentType: 'text/html', body: '<title>processor</title>' }));
    await page.goto(`${gw.origins.console}/#billing`);
    await page.getByRole('button', { name: 'Buy Pro' }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.com\//);
    await page.goto(`${gw.origins.console}/#billing`);
    // (stripe-mock answers its fixture portal URL, on a Stripe development host rather than billing.stripe.com)
    await page.getByRole('button', { name: 'Manage billing and cancel' }).click();
    await page.waitForURL((url) => url.protocol === 'https:' && url.hostname.includes('stripe'));

    // The processor sends the person back to the section they left, which says the outcome comes by webhook.
    await page.goto(`${gw.origins.console}/billing/done?session_id=cs_test`);
    await page.locator('#catalog').waitFor();
    await expectText(page, '#processor-return', 'within seconds');
    expect(await seriousViolations(page), 'return page accessibility').to.deep.equal([]);
  });
});

async function expectText(page: import('playwright-core').Page, selector: string, text: string): Promise<void> {
  await page.locator(selector, { hasText: text }).waitFor({ timeout: 10_000 });
}
