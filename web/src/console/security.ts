/**
 * Security: the account's passkeys (and adding one on this device), two-factor TOTP enrolment with a QR
 * code and recovery codes shown once, signing out here or everywhere. Every action is an auth-host route
 * called with the session cookie.
 */
import { startRegistration } from '@simplewebauthn/browser';
import { call, origins } from '../api.js';
import { busy, dateText, h } from '../dom.js';
import { newPhrase, recoveryKey } from '../recovery-key.js';
import type { Section } from './section.js';

interface Methods {
  passkeys?: Array<{ id: string; createdAt?: string; lastUsedAt?: string | null; label?: string }>;
  totp?: boolean;
  [k: string]: unknown;
}

export const security: Section = {
  title: 'Security',
  async render(into, { errorBox, refresh }) {
    const [methods, recovery] = await Promise.all([
      call<Methods>('auth', 'GET', '/v1/account/sign-in-methods'),
      call<{
        setUp: boolean;
        pending: { id: string; startedAt: string; completesAt: string } | null;
        cancelled: { id: string; startedAt: string; cancelledAt: string; by: string } | null;
      }>('auth', 'GET', '/v1/recovery'),
    ]);
    const passkeys = methods.passkeys ?? [];

    const add = h('button', { type: 'button', id: 'add-passkey' }, 'Add a passkey on this device');
    add.addEventListener(
      'click',
      () =>
        void busy(add, errorBox, async () => {
          const optionsJSON = await call<Parameters<typeof startRegistration>[0]['optionsJSON']>('auth', 'POST', '/v1/passkey/register/options', {});
          await call('auth', 'POST', '/v1/passkey/register/verify', await startRegistration({ optionsJSON }));
          refresh();
        }),
    );

    const totpBox = h('div', { id: 'totp-box' });
    const totpState = h('p', { id: 'totp-state' }, methods.totp ? 'Two-factor sign-in is on.' : 'Two-factor sign-in is off.');
    const enrol = h('button', { type: 'button', id: 'totp-enrol' }, 'Set up an authenticator app');
    enrol.addEventListener(
      'click',
      () =>
        void busy(enrol, errorBox, async () => {
          const started = await call<{ secret: string; uri: string }>('auth', 'POST', '/v1/totp/enrol', {});
          const QRCode = (await import('qrcode')).default; // its own chunk, loaded on enrolment only
          const img = h('img', {
            src: await QRCode.toDataURL(started.uri, { margin: 1, width: 200 }),
            alt: 'QR code for your authenticator app',
            width: '200',
            height: '200',
          });
          const confirm = h(
            'form',
            { id: 'totp-confirm' },
            h('label', { for: 'totp-first-code' }, 'The 6-digit code your app shows now'),
            h('input', { id: 'totp-first-code', name: 'code', autocomplete: 'one-time-code', inputmode: 'numeric', pattern: '[0-9]{6}', required: true }),
            h('button', { type: 'submit', class: 'primary' }, 'Turn on two-factor'),
          );
          confirm.addEventListener('submit', (event) => {
            event.preventDefault();
            const code = ((new FormData(confirm).get('code') as string | null) ?? '').trim();
            void busy(confirm.querySelector('button')!, errorBox, async () => {
              const done = await call<{ recoveryCodes: string[] }>('auth', 'POST', '/v1/totp/enrol/confirm', { code });
              // The section says what is true now: the state line above and the button change with it.
              totpState.textContent = 'Two-factor sign-in is on.';
              enrol.remove();
              totpBox.replaceChildren(
                h('p', {}, h('strong', {}, 'Two-factor is on. Save these recovery codes now: they are shown only once, and each works once.')),
                h('ul', { id: 'recovery-codes', class: 'mono' }, ...done.recoveryCodes.map((c) => h('li', {}, c))),
              );
            });
          });
          totpBox.replaceChildren(
            h('p', {}, 'Scan this with your authenticator app, or type the key by hand:'),
            img,
            h('p', { class: 'mono', id: 'totp-secret' }, started.secret),
            confirm,
          );
          (confirm.querySelector('input') as HTMLInputElement).focus();
        }),
    );

    // Recovery: the phrase is made here and shown once; only its public key goes to the server.
    const recoveryBox = h('div', { id: 'recovery-box' });
    const recoveryState = h(
      'p',
      { id: 'recovery-state' },
      recovery.setUp ? 'Recovery is set up.' : 'Recovery is not set up: without it, losing every passkey and wallet loses the account.',
    );
    const setUp = h('button', { type: 'button', id: 'recovery-setup' }, recovery.setUp ? 'Replace the recovery phrase and secret' : 'Set up recovery');
    setUp.addEventListener(
      'click',
      () =>
        void busy(setUp, errorBox, async () => {
          const phrase = newPhrase();
          const key = await recoveryKey(phrase);
          const { recoverySecret } = await call<{ recoverySecret: string }>('auth', 'POST', '/v1/recovery/setup', { publicKey: key.publicKey });
          recoveryState.textContent = 'Recovery is set up.';
          setUp.textContent = 'Replace the recovery phrase and secret';
          recoveryBox.replaceChildren(
            h(
              'p',
              {},
              h('strong', {}, 'Write both down now, offline and apart from each other: they are shown only once, and the server never had the phrase.'),
            ),
            h('p', {}, 'Recovery phrase (12 words):'),
            h('p', { class: 'mono once', id: 'recovery-phrase-shown' }, phrase),
            h('p', {}, 'One-time recovery secret:'),
            h('p', { class: 'mono once', id: 'recovery-secret-shown' }, recoverySecret),
          );
        }),
    );
    const cancel = h('button', { type: 'button', id: 'recovery-cancel', class: 'danger' }, 'Cancel this recovery');
    cancel.addEventListener(
      'click',
      () =>
        void busy(cancel, errorBox, async () => {
          await call('auth', 'POST', '/v1/recovery/cancel', {});
          refresh();
        }),
    );

    const everywhere = h('button', { type: 'button', id: 'sign-out-everywhere', class: 'danger' }, 'Sign out everywhere');
    everywhere.addEventListener(
      'click',
      () =>
        void busy(everywhere, errorBox, async () => {
          await call('auth', 'POST', '/v1/session/end-all', {});
          location.assign(`${origins().auth}/sign-in`);
        }),
    );

    into.append(
      h('h2', {}, 'Passkeys'),
      passkeys.length
        ? h(
            'table',
            { id: 'passkeys' },
            h('caption', {}, 'Passkeys that can sign in to this account'),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Passkey'), h('th', { scope: 'col' }, 'Added'), h('th', { scope: 'col' }, 'Last used'))),
            h(
              'tbody',
              {},
              ...passkeys.map((p) =>
                h(
                  'tr',
                  {},
                  h('td', { class: 'mono' }, p.label ?? `${p.id.slice(0, 12)}…`),
                  h('td', {}, dateText(p.createdAt)),
                  h('td', {}, dateText(p.lastUsedAt)),
                ),
              ),
            ),
          )
        : h('p', {}, 'No passkey yet.'),
      h('p', {}, add),
      h('h2', {}, 'Two-factor'),
      methods.totp ? totpState : h('div', {}, totpState, enrol, totpBox),
      h('h2', {}, 'Recovery'),
      recovery.pending
        ? h(
            'div',
            { class: 'alert', id: 'recovery-pending' },
            `A recovery of this account started ${dateText(recovery.pending.startedAt)} and completes at ${dateText(recovery.pending.completesAt)}. If it was not you, cancel it.`,
            ' ',
            cancel,
          )
        : '',
      // The owner's sign-in (or any use of a session) ends a recovery under way: say so, so a recovery the
      // owner did not start is noticed and the phrase and secret replaced.
      recovery.cancelled
        ? h(
            'div',
            { class: 'alert', id: 'recovery-cancelled' },
            `A recovery of this account started ${dateText(recovery.cancelled.startedAt)} was ended by your sign-in (${recovery.cancelled.by}) at ${dateText(recovery.cancelled.cancelledAt)}. If it was not you who started it, someone holds your recovery phrase and secret: set recovery up again.`,
          )
        : '',
      recoveryState,
      setUp,
      recoveryBox,
      h('h2', {}, 'Sessions'),
      h('p', {}, 'Sign out of every browser and device this account is signed in on.'),
      everywhere,
    );
  },
};
