/**
 * {console_url}/: the signed-in person's console. One page, one section at a time chosen by the URL's hash
 * (#home, #tokens, #verification, #billing, #usage, #security), each a module that renders into <main> from
 * the documented API. Without a valid session the page goes to the sign-in page and comes back here.
 */
import { call, origins } from '../api.js';
import { $, announce, busy, errorText, h } from '../dom.js';
import type { Section, Session } from './section.js';
import { home } from './home.js';
import { tokens } from './tokens.js';
import { verification } from './verification.js';
import { billing } from './billing.js';
import { usage } from './usage.js';
import { security } from './security.js';

const SECTIONS: Record<string, Section> = { home, tokens, verification, billing, usage, security };

/** The section: the hash, else the path the payment processor sent the person back to (/billing/done ...). */
function sectionName(): string {
  return location.hash.slice(1) || location.pathname.split('/')[1] || 'home';
}

/** Back from the payment processor: its outcome arrives by webhook, so say so rather than guess it. */
function returnNotice(): HTMLElement | '' {
  if (!location.pathname.endsWith('/done')) return '';
  return h(
    'p',
    { class: 'once', role: 'status', id: 'processor-return' },
    'Welcome back. The payment processor tells portcullis the outcome within seconds; reload this page to see it.',
  );
}

async function show(session: Session): Promise<void> {
  const name = sectionName();
  const section = SECTIONS[name] ?? home;
  const main = $('#main');
  for (const a of document.querySelectorAll<HTMLAnchorElement>('nav a')) {
    if (a.hash === `#${name}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const errorBox = h('div', { class: 'alert', role: 'alert', tabindex: '-1', hidden: true });
  const body = h('div');
  main.replaceChildren(h('h1', {}, section.title), returnNotice(), errorBox, body);
  document.title = `${section.title} · portcullis`;
  try {
    await section.render(body, { session, errorBox, refresh: () => void show(session) });
  } catch (err) {
    errorBox.hidden = false;
    errorBox.textContent = errorText(err);
  }
  announce(`${section.title} loaded`);
}

async function start(): Promise<void> {
  const session = await call<Session>('api', 'GET', '/v1/session');
  if (!session.valid) {
    location.assign(`${origins().auth}/sign-in?return=${encodeURIComponent(location.href)}`);
    return;
  }
  const signOut = $('#sign-out') as HTMLButtonElement;
  signOut.addEventListener(
    'click',
    () =>
      void busy(signOut, $('#main'), async () => {
        await call('auth', 'POST', '/v1/session/end', {});
        location.assign(`${origins().auth}/sign-in`);
      }),
  );
  window.addEventListener('hashchange', () => {
    void show(session).then(() => $('#main').focus());
  });
  await show(session);
}

void start();
