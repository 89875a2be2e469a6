/**
 * Billing: the catalog (plans, top-ups, tiers listed but not yet purchasable), buying through the
 * processor's hosted checkout, the customer portal, and the day's receipts with a link to each receipt's
 * JSON and how to verify it offline. Credits arrive only through the paid-invoice webhook, never by
 * coming back to the success page. From /v1/billing/{catalog,status,checkout,portal} and /v1/receipts.
 */
import { call, origins } from '../api.js';
import { busy, dateText, h, usd } from '../dom.js';
import type { Section } from './section.js';
import type { BillingStatus } from './research.js';

/** An item of GET /v1/billing/catalog, under `plans`, `topups` or `creditTiers`. */
interface CatalogItem {
  sku: string;
  name?: string;
  usd?: number;
  priceMicroUSD?: number;
  purchasable: boolean;
}

interface Catalog {
  checkoutEnabled: boolean;
  plans: CatalogItem[];
  topups: CatalogItem[];
  creditTiers: CatalogItem[];
}

/** Every item of the catalog with what kind it is, in the order a buyer reads them. */
function catalogItems(catalog: Catalog): Array<CatalogItem & { kind: string }> {
  const byPrice = (a: CatalogItem, b: CatalogItem) => (a.priceMicroUSD ?? a.usd ?? 0) - (b.priceMicroUSD ?? b.usd ?? 0);
  return [
    ...[...catalog.plans].sort(byPrice).map((p) => ({ ...p, kind: 'plan, monthly' })),
    ...catalog.topups.map((p) => ({ ...p, kind: 'top-up' })),
    ...catalog.creditTiers.map((p) => ({ ...p, name: p.name ?? `${p.usd} USD of credits`, kind: 'credits, monthly' })),
  ];
}

interface Receipt {
  id: string;
  model?: string;
  at?: string;
  createdAt?: string;
  billing?: string;
  chargedMicroUSD?: number;
  outcome?: string;
  [k: string]: unknown;
}

export const billing: Section = {
  title: 'Billing',
  async render(into, { errorBox }) {
    const day = new Date().toISOString().slice(0, 10);
    const [catalog, status, receipts] = await Promise.all([
      call<Catalog>('api', 'GET', '/v1/billing/catalog'),
      call<BillingStatus>('api', 'GET', '/v1/billing/status'),
      call<{ data: Receipt[] }>('api', 'GET', `/v1/receipts?day=${day}`),
    ]);
    const { checkoutEnabled } = catalog;
    const ai = status.balances.find((b) => b.scope === 'ai');

    const buy = (item: CatalogItem) => {
      const button = h('button', { type: 'button', 'data-sku': item.sku, 'aria-label': `Buy ${item.name ?? item.sku}` }, 'Buy');
      button.addEventListener(
        'click',
        () =>
          void busy(button, errorBox, async () => {
            const { url } = await call<{ url: string }>('api', 'POST', '/v1/billing/checkout', { sku: item.sku, requestId: crypto.randomUUID() });
            location.assign(url);
          }),
      );
      return button;
    };
    const portal = h('button', { type: 'button', id: 'open-portal', disabled: !checkoutEnabled }, 'Manage billing and cancel');
    portal.addEventListener(
      'click',
      () =>
        void busy(portal, errorBox, async () => {
          const { url } = await call<{ url: string }>('api', 'POST', '/v1/billing/portal', {});
          location.assign(url);
        }),
    );

    const items = catalogItems(catalog);
    into.append(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Plan'),
        h('dd', {}, status.plan ?? 'none'),
        h('dt', {}, 'Available credits'),
        h('dd', { id: 'available' }, usd(ai?.availableMicroUSD ?? 0)),
        h('dt', {}, 'Spent'),
        h('dd', {}, usd(ai?.spentMicroUSD ?? 0)),
        h('dt', {}, 'Held for calls in flight'),
        h('dd', {}, usd(ai?.reservedMicroUSD ?? 0)),
      ),
      h('p', {}, portal),
      h('h2', {}, 'Catalog'),
      checkoutEnabled
        ? ''
        : h(
            'p',
            { class: 'notice', id: 'checkout-off' },
            'Payments are not set up on this deployment, so nothing can be bought here. ',
            'To get credits or a plan, ask its operator: they can grant them directly (',
            h('code', {}, 'portcullis admin credits grant'),
            ' or ',
            h('code', {}, 'portcullis admin plan set'),
            ').',
          ),
      h(
        'table',
        { id: 'catalog' },
        h('caption', {}, 'Plans and top-ups (USD, tax excluded)'),
        h(
          'thead',
          {},
          h('tr', {}, h('th', { scope: 'col' }, 'Item'), h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col' }, 'Price'), h('th', { scope: 'col' }, '')),
        ),
        h(
          'tbody',
          {},
          ...items.map((item) =>
            h(
              'tr',
              {},
              h('td', {}, item.name ?? item.sku),
              h('td', {}, item.kind),
              h('td', {}, typeof item.priceMicroUSD === 'number' ? usd(item.priceMicroUSD) : ''),
              h(
                'td',
                {},
                item.purchasable && checkoutEnabled
                  ? buy(item)
                  : checkoutEnabled
                    ? 'not yet purchasable'
                    : h(
                        'button',
                        {
                          type: 'button',
                          disabled: true,
                          'aria-describedby': 'checkout-off',
                          'aria-label': `Buy ${item.name ?? item.sku} (payments are not set up)`,
                        },
                        'Buy',
                      ),
              ),
            ),
          ),
        ),
      ),
      h('h2', {}, `Receipts of ${day}`),
      receipts.data.length
        ? h(
            'table',
            { id: 'receipts' },
            h('caption', {}, 'Each receipt is the durable record of one call'),
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', { scope: 'col' }, 'Receipt'),
                h('th', { scope: 'col' }, 'Model'),
                h('th', { scope: 'col' }, 'Outcome'),
                h('th', { scope: 'col' }, 'Charged'),
                h('th', { scope: 'col' }, 'At'),
              ),
            ),
            h(
              'tbody',
              {},
              ...receipts.data.map((r) =>
                h(
                  'tr',
                  {},
                  h('td', {}, h('a', { href: `${origins().api}/v1/receipts/${encodeURIComponent(r.id)}`, class: 'mono' }, r.id)),
                  h('td', {}, r.model ?? ''),
                  h('td', {}, String(r.outcome ?? r.billing ?? '')),
                  h('td', {}, usd(r.chargedMicroUSD ?? 0)),
                  h('td', {}, dateText(r.createdAt ?? r.at)),
                ),
              ),
            ),
          )
        : h('p', {}, 'No calls today.'),
      h(
        'p',
        { class: 'muted' },
        'To check a receipt offline, save its JSON and run ',
        h('code', {}, 'portcullis receipt verify receipt.json'),
        ' with the public key that GET /v1/secure publishes.',
      ),
    );
  },
};
