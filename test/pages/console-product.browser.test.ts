/**
 * The console read as a product, in Chromium: statuses in plain words with the code kept small for support,
 * a Security section that says what is true right after an action (not "off" above "on"), Billing without a
 * payment processor that says what to do instead and offers no live Buy button, plans in price order, the
 * receipts' "At" column filled, the acceptable-use policy linked, the person's scope applications listed with
 * their state (updated in place when one is sent), a favicon, and a layout that fits a 390 px phone. Every state passes axe-core with no serious or critical violation.
 *
 * The account is made by the CLI's software passkey (as a person without a browser would) and its session
 * cookie handed to the browser. With PORTCULLIS_SCREENSHOTS=docs the states are saved to docs/images/ (how
 * the README's and docs/console.md's pictures are made); otherwise to test/artifacts/.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestGateway, REPO, type TestGateway } from '../helpers/gateway.js';
import { launchBrowser, openPage, screenshot, screenshotOnFailure, seriousViolations, type BrowserPage } from '../helpers/chromium.js';
import { cli } from '../helpers/cli.js';
import { codeAt } from '../../src/totp/codes.js';

describe('the console as a product (Chromium)', function () {
  this.timeout(90_000);
  let gw: TestGateway;
  let browser: Browser;
  let bp: BrowserPage;

  before(async () => {
    execFileSync(process.execPath, [join(REPO, 'scripts/web-build.mjs')], { stdio: 'inherit' });
    gw = await startTestGateway(); // no payment processor configured
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

  /** A new account through the CLI's software passkey; its session cookie goes to the browser. */
  async function signedIn(): Promise<{ principal: string; cookie: string }> {
    const key = join(mkdtempSync(join(tmpdir(), 'pcl-console-')), 'me.passkey.json');
    const run = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', gw.origins.auth]);
    expect(run.code, run.stderr).to.equal(0);
    const cookie = run.stdout.trim();
    const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
    await bp.context.addCookies([{ name, value, domain: 'localhost', path: '/', httpOnly: true, sameSite: 'Lax' }]);
    return { principal: /created account (\S+)/.exec(run.stderr)![1]!, cookie };
  }

  async function open(page: Page, section: string): Promise<void> {
    await page.goto(`${gw.origins.console}/#${section}`);
    await page.locator('main h1').waitFor();
    await page.waitForFunction("!document.querySelector('main')?.textContent?.includes('Loading')");
  }

  it('Home: the research status and next step in plain words, the code small beside them; a favicon', async () => {
    const { page } = bp;
    await signedIn();
    await open(page, 'home');
    await page.locator('#research-status').waitFor();
    const status = (await page.locator('#research-status').textContent())!;
    expect(status).to.contain('Red-team models open once you verify a card');
    expect(status).to.not.match(/^pending:/);
    expect(await page.locator('#research-status code.code-ref').textContent()).to.equal('verification-required');
    expect(await page.locator('#next-step').textContent()).to.equal('Verify a card');
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    expect((await fetch(`${gw.origins.console}${icon}`)).headers.get('content-type')).to.equal('image/svg+xml');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, 'console-home.png');
  });

  it('Billing without a payment processor: says so and what to do instead, no live Buy button; plans by price; receipts dated', async () => {
    const { page } = bp;
    const { cookie } = await signedIn();
    const issued = await fetch(`${gw.apiUrl}/v1/account/api-token`, {
      method: 'POST',
      headers: { cookie, origin: gw.origins.console, 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'console test' }),
    });
    const { token } = (await issued.json()) as { token: string };
    expect((await gw.chat(token, { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] })).status).to.equal(200);
    await open(page, 'billing');
    await page.locator('#catalog').waitFor();
    expect(await page.locator('#checkout-off').textContent()).to.match(/Payments are not set up on this deployment.*ask its operator/);
    const buys = page.locator('#catalog button');
    expect(await buys.count()).to.be.greaterThan(0);
    for (let i = 0; i < (await buys.count()); i++) expect(await buys.nth(i).isDisabled()).to.equal(true);
    expect(await page.locator('#open-portal').isDisabled()).to.equal(true);
    const plans = await page
      .locator('#catalog tbody tr')
      .evaluateAll((rows) =>
        rows.filter((r) => r.children[1]?.textContent === 'plan, monthly').map((r) => Number((r.children[2]?.textContent ?? '').replace(/[^0-9.]/g, ''))),
      );
    expect(plans.length).to.be.greaterThan(1);
    expect(plans).to.deep.equal([...plans].sort((a, b) => a - b));
    const at = await page.locator('#receipts tbody tr td:nth-child(5)').first().textContent();
    expect(at?.trim()).to.not.equal('');
    expect(at).to.not.equal('—');
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, 'console-billing.png');
  });

  it('Security: after turning two-factor on, the section says on (and only on), without a reload', async () => {
    const { page } = bp;
    await signedIn();
    await open(page, 'security');
    await page.locator('#totp-enrol').click();
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    await page.locator('#totp-first-code').fill(codeAt(secret, Date.now()));
    await page.getByRole('button', { name: 'Turn on two-factor' }).click();
    await page.locator('#recovery-codes').waitFor();
    expect(await page.locator('#totp-state').textContent()).to.equal('Two-factor sign-in is on.');
    expect(await page.locator('main').textContent()).to.not.contain('Two-factor sign-in is off');
    expect(await page.locator('#totp-enrol').count()).to.equal(0);
    await page.locator('#recovery-setup').click();
    await page.locator('#recovery-phrase-shown').waitFor();
    expect(await page.locator('#recovery-state').textContent()).to.equal('Recovery is set up.');
    expect(await page.locator('main').textContent()).to.not.contain('Recovery is not set up');
    expect(await seriousViolations(page)).to.deep.equal([]);
  });

  it("translates a refused passkey prompt into what to do, keeping the browser's name for it small", async () => {
    const { page, cdp, authenticatorId } = bp;
    await signedIn();
    await open(page, 'security');
    // The person declines the fingerprint, face or PIN: the authenticator cannot verify them.
    await cdp.send('WebAuthn.setUserVerified', { authenticatorId, isUserVerified: false });
    await page.locator('#add-passkey').click();
    const alert = page.locator('main .alert[role="alert"]');
    await alert.waitFor({ state: 'visible' });
    const text = (await alert.textContent())!;
    expect(text).to.contain('The passkey prompt was closed or timed out. Try again, and approve it on your device');
    expect(text).to.not.contain('w3.org');
    expect(await alert.locator('.code-ref').textContent()).to.equal('NotAllowedError');
  });

  it('Tokens: the export line an agent needs is shown whole, not cut at the edge of its box', async () => {
    const { page } = bp;
    await page.setViewportSize({ width: 390, height: 844 });
    await signedIn();
    await open(page, 'tokens');
    await page.locator('#token-label').fill('phone agent');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const box = page.locator('#token-export');
    await box.waitFor();
    expect(await box.inputValue()).to.match(/^export OPENAI_BASE_URL=\S+ OPENAI_API_KEY=pcl_pat_/);
    const [scroll, client] = await box.evaluate((el) => [el.scrollWidth, el.clientWidth]);
    expect(scroll, 'no part of the line hidden sideways').to.be.at.most(client);
    expect(await seriousViolations(page)).to.deep.equal([]);
  });

  it('Verification links the acceptable-use policy it asks consent to', async () => {
    const { page } = bp;
    await signedIn();
    await open(page, 'verification');
    const href = (await page.locator('#aup-link').getAttribute('href'))!;
    const secure = (await (await fetch(href)).json()) as { compliance: { aup: unknown } };
    expect(secure.compliance.aup).to.be.an('object');
  });

  it('Verification states verification, research status and each application in words, the list updated in place when one is sent', async () => {
    const { page } = bp;
    await signedIn();
    await open(page, 'verification');
    // The section's state lines in words too, their codes small beside them.
    expect(await page.locator('#ekyc-state').textContent()).to.equal('Not verified yet. none');
    expect(await page.locator('#research-status').textContent()).to.match(/^Red-team models open once you verify a card\..* verification-required$/);
    expect(await page.locator('#applications').textContent()).to.equal('No application yet.');
    await page.getByLabel('Scope id').fill('acme-app');
    await page.getByLabel(/^Target/).fill('github.com/acme/app');
    await page.getByLabel('Purpose').fill('triage the findings of our own fuzzing runs');
    await page.getByLabel(/I accept the acceptable-use policy/).check();
    await page.getByLabel(/runs no tools/).check();
    await page.getByRole('button', { name: 'Submit application' }).click();
    const row = page.locator('#applications tbody tr');
    await row.waitFor();
    expect(await page.locator('#application-result').textContent()).to.contain('waiting for review');
    expect(await row.locator('td').first().textContent()).to.equal('acme-app');
    const state = (await row.locator('td').last().textContent())!;
    expect(state).to.match(/^Waiting for review: an operator approves or refuses it/);
    expect(state).to.not.contain('submitted');
    const id = (await row.locator('code.code-ref').textContent())!;
    expect(id).to.match(/^app_/);
    expect(await seriousViolations(page)).to.deep.equal([]);

    // The operator decides; the next visit to the section says so, in words, with the operator's note.
    expect((await gw.admin('POST', `/applications/${id}/approve`, { note: 'own repository' })).status).to.equal(200);
    await page.reload();
    await page.locator('#applications tbody tr').waitFor();
    expect(await page.locator('#applications tbody tr td').last().textContent()).to.match(
      /^Approved \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: the scope is open \(“own repository”\)\. app_/,
    );
    expect(await seriousViolations(page)).to.deep.equal([]);
    await screenshot(page, 'console-applications.png');
  });

  it('fits a 390 px phone: no sideways scrolling, the section starts on the first screen', async () => {
    const { page } = bp;
    await page.setViewportSize({ width: 390, height: 844 });
    await signedIn();
    for (const section of ['home', 'billing', 'tokens', 'security']) {
      await open(page, section);
      await page.locator('main h1').waitFor();
      const width = await page.evaluate<number>('document.documentElement.scrollWidth');
      expect(width, `${section}: page width`).to.be.at.most(390);
      const top = (await page.locator('main h1').boundingBox())!.y;
      expect(top, `${section}: where the section starts`).to.be.below(844 / 3);
      if (section === 'billing') await screenshot(page, 'console-phone-billing.png');
    }
    expect(await seriousViolations(page)).to.deep.equal([]);
  });
});
