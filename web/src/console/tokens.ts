/**
 * Tokens: issue a personal access token (shown once, with a copy button and the environment lines an
 * agent needs), list the account's tokens (label, created, last used) and revoke one after a confirmation.
 * From POST /v1/account/api-token, GET /v1/account/api-tokens and POST /v1/account/api-token/revoke.
 */
import { call, origins } from '../api.js';
import { busy, dateText, h } from '../dom.js';
import type { Section } from './section.js';

/** An item of GET /v1/account/api-tokens (`{data: [...]}`): never the token itself. */
interface TokenItem {
  id: string;
  label: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const listTokens = async () => (await call<{ data: TokenItem[] }>('api', 'GET', '/v1/account/api-tokens')).data;

function shownOnce(token: string): HTMLElement {
  const exportLine = `export OPENAI_BASE_URL=${origins().api}/v1 OPENAI_API_KEY=${token}`;
  const copy = (text: string, label: string) => {
    const button = h('button', { type: 'button' }, label);
    button.addEventListener('click', () => {
      void navigator.clipboard.writeText(text).then(
        () => (button.textContent = 'Copied'),
        () => (button.textContent = 'Select the text and copy it'),
      );
    });
    return button;
  };
  return h(
    'div',
    { class: 'once', id: 'new-token' },
    h('p', {}, h('strong', {}, 'Copy this token now: it is shown only once.')),
    h('label', { for: 'token-value' }, 'Token'),
    h('input', { id: 'token-value', class: 'mono', readonly: true, value: token }),
    copy(token, 'Copy token'),
    h('label', { for: 'token-export' }, 'For an agent or an OpenAI SDK, in its environment'),
    // A textarea, not an input: the whole line stays visible, wrapped, rather than cut at the box's edge.
    h('textarea', { id: 'token-export', class: 'mono', readonly: true, rows: '3' }, exportLine),
    copy(exportLine, 'Copy export line'),
  );
}

export const tokens: Section = {
  title: 'Tokens',
  async render(into, { errorBox }) {
    const items = await listTokens();
    const issued = h('div');
    const form = h(
      'form',
      { id: 'issue-form' },
      h('h2', {}, 'Issue a token'),
      h('label', { for: 'token-label' }, 'Label (where the token will live, e.g. "laptop agent")'),
      h('input', { id: 'token-label', name: 'label', required: true, maxlength: '100' }),
      h('button', { type: 'submit', class: 'primary' }, 'Issue token'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const label = ((new FormData(form).get('label') as string | null) ?? '').trim();
      void busy(form.querySelector('button')!, errorBox, async () => {
        const t = await call<{ id: string; label: string; token: string }>('api', 'POST', '/v1/account/api-token', { label });
        issued.replaceChildren(shownOnce(t.token));
        (issued.querySelector('#token-value') as HTMLInputElement).select();
        form.reset();
        await renderList();
      });
    });

    const table = h('div', { id: 'token-list' });
    const confirmDialog = h(
      'dialog',
      { id: 'revoke-dialog', 'aria-labelledby': 'revoke-title' },
      h(
        'form',
        { method: 'dialog' },
        h('h2', { id: 'revoke-title' }, 'Revoke this token?'),
        h('p', { id: 'revoke-text' }),
        h(
          'div',
          { class: 'actions' },
          h('button', { value: 'cancel', type: 'submit' }, 'Keep it'),
          h('button', { value: 'revoke', type: 'submit', class: 'danger', id: 'revoke-confirm' }, 'Revoke'),
        ),
      ),
    );

    const renderList = async (list?: TokenItem[]) => {
      const rows = list ?? (await listTokens());
      if (!rows.length) {
        table.replaceChildren(h('p', {}, 'No tokens yet.'));
        return;
      }
      table.replaceChildren(
        h(
          'table',
          {},
          h('caption', {}, 'Your tokens'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Label'),
              h('th', { scope: 'col' }, 'Created'),
              h('th', { scope: 'col' }, 'Last used'),
              h('th', { scope: 'col' }, 'State'),
            ),
          ),
          h(
            'tbody',
            {},
            ...rows.map((t) => {
              const revoked = t.revokedAt !== null;
              const revoke = h('button', { type: 'button', class: 'danger', 'data-token-id': t.id, 'aria-label': `Revoke ${t.label}` }, 'Revoke');
              revoke.addEventListener('click', () => {
                confirmDialog.querySelector('#revoke-text')!.textContent = `"${t.label}" stops working at once; an agent using it gets 401 token-revoked.`;
                confirmDialog.returnValue = '';
                confirmDialog.onclose = () => {
                  if (confirmDialog.returnValue !== 'revoke') return;
                  void busy(revoke, errorBox, async () => {
                    await call('api', 'POST', '/v1/account/api-token/revoke', { id: t.id });
                    await renderList();
                  });
                };
                confirmDialog.showModal();
              });
              return h(
                'tr',
                {},
                h('td', {}, t.label),
                h('td', {}, dateText(t.createdAt)),
                h('td', {}, dateText(t.lastUsedAt)),
                h('td', {}, revoked ? 'revoked' : revoke),
              );
            }),
          ),
        ),
      );
    };
    await renderList(items);
    into.append(form, issued, h('h2', {}, 'Issued tokens'), table, confirmDialog);
  },
};
