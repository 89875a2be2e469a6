/**
 * A few DOM helpers shared by the pages: build elements without innerHTML (so nothing the server or a user
 * wrote is ever parsed as markup), announce status to screen readers, and run a button's action with the
 * button disabled and its error shown beside it.
 */
import { ApiError } from './api.js';

type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | boolean | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

export function $(selector: string): HTMLElement {
  const el = document.querySelector<HTMLElement>(selector);
  if (!el) throw new Error(`missing element ${selector}`);
  return el;
}

/** The page's live region: polite announcements a screen reader reads out. */
export function announce(text: string): void {
  const region = document.getElementById('status');
  if (region) region.textContent = text;
}

/**
 * What a browser's own failures mean to a person, and what to do: the exception text of WebAuthn and fetch
 * ("The operation either timed out or was not allowed. See: https://www.w3.org/...") says neither.
 */
const BROWSER_ERRORS: Record<string, string> = {
  NotAllowedError: 'The passkey prompt was closed or timed out. Try again, and approve it on your device (fingerprint, face or PIN).',
  InvalidStateError: 'This device already holds a passkey for this account: sign in with it instead.',
  SecurityError: 'The browser refused the passkey for this address. Open the console at the address the gateway printed (http://localhost:…, not 127.0.0.1).',
  NotSupportedError: 'This browser cannot make a passkey here. Try another browser, or sign in with a wallet.',
  AbortError: 'The request was cancelled. Try again.',
};

/** The message to show, and the code (or exception name) to keep beside it for support. */
export function errorParts(err: unknown): { text: string; code: string } {
  if (err instanceof ApiError) return { text: err.message, code: err.code };
  if (err instanceof TypeError && /fetch|network/i.test(err.message)) {
    return {
      text: 'The gateway could not be reached. Check that it is running, and that this page was opened at the address it printed.',
      code: 'network-error',
    };
  }
  const name = (err as { name?: string })?.name ?? '';
  if (BROWSER_ERRORS[name]) return { text: BROWSER_ERRORS[name], code: name };
  return { text: err instanceof Error ? err.message : String(err), code: name || 'error' };
}

export function errorText(err: unknown): string {
  const { text, code } = errorParts(err);
  return `${text} (${code})`;
}

/** Shows an error in a form's alert box (role=alert, read out at once) and moves focus to it. */
export function showError(box: HTMLElement, err: unknown): void {
  const { text, code } = errorParts(err);
  box.hidden = false;
  box.replaceChildren(text, ' ', h('small', { class: 'code-ref' }, code));
  box.focus();
}

/** Runs `action` with `button` disabled; a failure goes to `errorBox`. */
export async function busy(button: HTMLButtonElement, errorBox: HTMLElement, action: () => Promise<void>): Promise<void> {
  button.disabled = true;
  errorBox.hidden = true;
  try {
    await action();
  } catch (err) {
    showError(errorBox, err);
  } finally {
    button.disabled = false;
  }
}

export function dateText(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

/** Integer micro-USD as dollars, without floating-point arithmetic on the amount. */
export function usd(micro: number): string {
  const sign = micro < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(micro));
  const dollars = Math.floor(abs / 1_000_000);
  const cents = Math.floor((abs % 1_000_000) / 10_000);
  return `${sign}$${dollars.toLocaleString('en-US')}.${String(cents).padStart(2, '0')}`;
}
