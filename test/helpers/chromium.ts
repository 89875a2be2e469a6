/**
 * A real browser for the page tests: Debian's Chromium (/usr/bin/chromium, installed by scripts/setup.sh)
 * driven by playwright-core, never a downloaded browser. Each page gets Chromium's virtual WebAuthn
 * authenticator through the DevTools protocol (a platform authenticator with user verification, holding
 * resident keys), so passkey ceremonies run for real: the browser makes the key, signs the challenge, and
 * the server checks it.
 *
 * `screenshotOnFailure` saves a failed test's page to test/artifacts/<title>.png; `screenshot` saves the states
 * the docs show.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { REPO } from './gateway.js';

export const CHROMIUM = process.env['PORTCULLIS_CHROMIUM'] ?? '/usr/bin/chromium';
const ARTIFACTS = join(REPO, 'test', 'artifacts');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // This machine has no network but loopback: without these, Chromium keeps trying Google's services.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface BrowserPage {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  /** Content-Security-Policy violations the page reported (console messages), for a test to assert none. */
  cspViolations: string[];
}

export async function openPage(browser: Browser): Promise<BrowserPage> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  const cspViolations: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
  });
  return { context, page, cdp, authenticatorId, cspViolations };
}

/**
 * Saves a picture of a page state the docs show: to docs/images/ when PORTCULLIS_SCREENSHOTS=docs (how the
 * README's and docs/console.md's pictures are made), otherwise to test/artifacts/.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env['PORTCULLIS_SCREENSHOTS'] === 'docs' ? join(REPO, 'docs', 'images') : ARTIFACTS;
  mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: join(dir, name), fullPage: true });
}

export async function screenshotOnFailure(page: Page | undefined, title: string): Promise<void> {
  if (!page) return;
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${title.replace(/[^\w.-]+/g, '-').slice(0, 120)}.png`), fullPage: true }).catch(() => undefined);
}

const axeSource = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/**
 * Runs axe-core in the page (through the DevTools protocol, which the page's CSP does not govern) and
 * returns the serious and critical violations of WCAG 2.x A/AA rules.
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate<{ violations: AxeViolation[] }>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } })`,
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
}
