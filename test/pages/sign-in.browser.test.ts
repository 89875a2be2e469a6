/**
 * The sign-in page offers every sign-in method of the auth host, and each works in a real browser
 * (Debian's Chromium driven by playwright-core): a passkey (Chromium's virtual authenticator), and through
 * an injected EIP-1193 wallet whose keys stay outside the page (as an extension holds them) SIWE, a
 * passkey-owned smart account on a real local chain 8453 (anvil; ERC-6492 before deployment, ERC-1271
 * after), and a DID/CACAO; the TOTP code a second factor asks for after a wallet sign-in, shown alone (the
 * methods hidden, a way back to them); and recovery's form. The page passes axe-core with no serious
 * violation and reports no CSP violation.
 *
 * Passkey sign-in, SIWE and recovery completed end to end are also in console.browser.test.ts; here the
 * page is the subject.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestGateway, REPO, type TestGateway } from '../helpers/gateway.js';
import { launchBrowser, openPage, screenshot, screenshotOnFailure, seriousViolations, type BrowserPage } from '../helpers/chromium.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { deployFactory, SoftwarePasskey } from '../helpers/passkey-account.js';
import { codeAt } from '../../src/totp/codes.js';

/** The gateway's clock runs `skew` ms ahead of the machine's, so a test can step past a TOTP time step. */
let skew = 0;
const now = () => Date.now() + skew;

/** A wallet as an extension injects it: window.ethereum, answering for `address` on `chainId`, signing outside the page. */
async function injectWallet(page: Page, address: string, chainId: number, sign: (message: string) => Promise<string> | string): Promise<void> {
  await page.exposeFunction('walletSign', (message: string) => sign(message));
  await page.addInitScript(
    ({ address, chainId }: { address: string; chainId: number }) => {
      (globalThis as any).ethereum = {
        async request({ method, params }: { method: string; params?: unknown[] }) {
          if (method === 'eth_requestAccounts') return [address];
          if (method === 'eth_chainId') return `0x${chainId.toString(16)}`;
          if (method === 'personal_sign') return (globalThis as any).walletSign((params as string[])[0]);
          throw new Error(`unsupported ${method}`);
        },
      };
    },
    { address, chainId },
  );
}

describe('the sign-in page: all six methods in a real browser (Chromium, anvil)', function () {
  this.timeout(90_000);
  let gw: TestGateway;
  let browser: Browser;
  let bp: BrowserPage;
  let node: Anvil;
  let factory: Awaited<ReturnType<typeof deployFactory>>;

  before(async () => {
    execFileSync(process.execPath, [join(REPO, 'scripts/web-build.mjs')], { stdio: 'inherit' });
    node = await startAnvil(8453);
    factory = await deployFactory(node);
    gw = await startTestGateway({ now, env: { PORTCULLIS_SMART_ACCOUNT_RPC_URL: node.url } });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await node?.stop();
  });
  beforeEach(async () => {
    bp = await openPage(browser);
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await screenshotOnFailure(bp.page, this.currentTest.fullTitle());
    expect(bp.cspViolations, 'Content-Security-Policy violations').to.deep.equal([]);
    await bp.context.close();
  });

  const signInPage = () => bp.page.goto(`${gw.origins.auth}/sign-in?return=${encodeURIComponent(`${gw.origins.console}/`)}`);
  const landed = async (): Promise<string> => {
    await bp.page.waitForURL(`${gw.origins.console}/`);
    return (await bp.page.locator('#principal-id').textContent())!;
  };
  const signOut = async () => {
    await bp.page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await bp.page.waitForURL((url) => url.href.startsWith(`${gw.origins.auth}/sign-in`));
  };

  /** Turns TOTP on for the page's signed-in account (its session, as the console does); returns the secret. */
  const enrolTotp = async (): Promise<string> => {
    const { context } = bp;
    const headers = { origin: gw.origins.auth, 'content-type': 'application/json' };
    const enrol = await context.request.post(`${gw.origins.auth}/v1/totp/enrol`, { headers, data: {} });
    expect(enrol.status(), await enrol.text()).to.equal(200);
    const { secret } = (await enrol.json()) as { secret: string };
    const confirm = await context.request.post(`${gw.origins.auth}/v1/totp/enrol/confirm`, { headers, data: { code: codeAt(secret, now()) } });
    expect(confirm.status(), await confirm.text()).to.equal(200);
    return secret;
  };

  it('offers all six methods; without a wallet in the browser the wallet methods say why they cannot run', async () => {
    const { page } = bp;
    await signInPage();
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings).to.include.members([
      'With a passkey',
      'With an Ethereum wallet',
      'With a smart account',
      'With a decentralized identifier (DID)',
      'Authenticator app (second factor)',
      'Lost every sign-in method?',
    ]);
    await page.getByText('Recover the account').click();
    for (const name of [
      'Sign in with a passkey',
      'Create an account with a passkey',
      'Sign in with a wallet',
      'Sign in with a smart account',
      'Sign in with a DID (CACAO)',
      'Start recovery',
      'Complete recovery',
    ]) {
      expect(await page.getByRole('button', { name, exact: true }).count(), name).to.equal(1);
    }
    expect(await page.locator('#no-wallet').isVisible()).to.equal(true);
    for (const name of ['Sign in with a wallet', 'Sign in with a smart account', 'Sign in with a DID (CACAO)']) {
      expect(await page.getByRole('button', { name, exact: true }).isDisabled(), name).to.equal(true);
    }
    expect(await seriousViolations(page), 'sign-in page accessibility').to.deep.equal([]);
  });

  it('signs in with a passkey-owned smart account: undeployed (ERC-6492), then deployed (ERC-1271), the same principal', async () => {
    const { page } = bp;
    const account = factory.account(new SoftwarePasskey(new URL(gw.origins.auth).hostname, gw.origins.auth));
    let deployed = false;
    // A smart-account wallet wraps its signature as ERC-6492 while the account has no code yet.
    await injectWallet(page, account.address, 8453, (message) => (deployed ? account.signMessage(message) : account.signMessageUndeployed(message)));
    await signInPage();
    expect(await page.locator('#no-wallet').isVisible()).to.equal(false);
    await page.getByRole('button', { name: 'Sign in with a smart account' }).click();
    const first = await landed();
    expect(first).to.match(/^did:web:[^:]+:tenant:/);
    await signOut();
    await account.deploy();
    deployed = true;
    await page.getByRole('button', { name: 'Sign in with a smart account' }).click();
    expect(await landed()).to.equal(first);
    const hint = await (await fetch(`${gw.urls.auth}/v1/link/hint?id=${encodeURIComponent(first)}`)).json();
    expect(hint).to.deep.equal({ methods: ['smart-account'] });
  });

  it('signs in with a DID (CACAO) and with SIWE from the same key, one principal; a TOTP code follows when enrolled', async () => {
    const { page } = bp;
    const key = privateKeyToAccount(generatePrivateKey());
    await injectWallet(page, key.address, 1, (message) => key.signMessage({ message }));
    await signInPage();
    await page.getByRole('button', { name: 'Sign in with a DID (CACAO)' }).click();
    const id = await landed();
    const hint = (await (await fetch(`${gw.urls.auth}/v1/link/hint?id=${encodeURIComponent(id)}`)).json()) as { methods: string[] };
    expect(hint.methods).to.include('cacao');

    // Turn on TOTP for the account, then sign in with SIWE: the page asks for a code.
    const secret = await enrolTotp();
    await signOut();
    await page.getByRole('button', { name: 'Sign in with a wallet' }).click();
    await page.getByLabel(/6-digit code/).waitFor();
    skew += 30_000; // a code works once: the next one is a time step later
    await page.getByLabel(/6-digit code/).fill(codeAt(secret, now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(await landed()).to.equal(id);
  });

  it('asks for the two-factor code alone: the sign-in methods hidden until the person signs in another way', async () => {
    const { page } = bp;
    await signInPage();
    await page.getByRole('button', { name: 'Create an account with a passkey' }).click();
    const id = await landed();
    const secret = await enrolTotp();
    await signOut();

    const methods = [
      'Sign in with a passkey',
      'Create an account with a passkey',
      'Sign in with a wallet',
      'Sign in with a smart account',
      'Sign in with a DID (CACAO)',
    ];
    const offered = async () => {
      const visible: string[] = [];
      for (const name of methods) if (await page.getByRole('button', { name, exact: true }).isVisible()) visible.push(name);
      return visible;
    };
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    const code = page.getByLabel(/6-digit code/);
    await code.waitFor();
    expect(await offered(), 'sign-in buttons beside the code prompt').to.deep.equal([]);
    expect(await page.getByText('Lost every sign-in method?').isVisible()).to.equal(false);
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).to.equal('totp-code');
    expect(await seriousViolations(page), 'the two-factor prompt').to.deep.equal([]);
    await screenshot(page, 'sign-in-two-factor.png');

    // A reload while the code is owed comes back to the code, not to the methods.
    await page.reload();
    await code.waitFor();
    expect(await offered()).to.deep.equal([]);

    // Another way: the half-done sign-in ends (no session left owing a code) and every method is back.
    await page.getByRole('button', { name: 'Sign in another way' }).click();
    await page.getByRole('button', { name: 'Sign in with a passkey', exact: true }).waitFor();
    expect(await code.isVisible()).to.equal(false);
    expect(await offered()).to.include.members(['Sign in with a passkey', 'Create an account with a passkey']);
    const session = (await (await bp.context.request.get(`${gw.origins.auth}/v1/session`)).json()) as Record<string, unknown>;
    expect(session).to.deep.equal({ valid: false });

    // And the whole way through: passkey, then the next code, then the console.
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await code.waitFor();
    skew += 30_000; // a code works once: the next one is a time step later
    await code.fill(codeAt(secret, now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    expect(await landed()).to.equal(id);
  });
});
