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

/** Replaces an element's children. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}

/** The page's live region: polite announcements a screen reader reads out. */
export function announce(text: string): void {
  const region = document.getElementById('status');
  if (region) region.textContent = text;
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}

/** Shows an error in a form's alert box (role=alert, read out at once) and moves focus to it. */
export function showError(box: HTMLElement, err: unknown): void {
  box.hidden = false;
  box.textContent = errorText(err);
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
