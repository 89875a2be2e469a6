/**
 * Home: who is signed in, whether red-team calls are open (and the next step when not), the rung and its
 * expiry, the approved scopes, the day's allowances as meters, and the balance and plan.
 * From GET /v1/session, GET /v1/research/status and GET /v1/billing/status.
 */
import { call } from '../api.js';
import { dateText, h, usd } from '../dom.js';
import type { Section } from './section.js';
import { type ResearchStatus, type BillingStatus, nextStep } from './research.js';

function meter(label: string, used: number, limit: number, unit: string): HTMLElement {
  const id = `m-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return h(
    'div',
    { class: 'meter' },
    h('label', { for: id }, `${label}: ${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} ${unit} used`),
    h('meter', { id, min: '0', max: String(Math.max(limit, 1)), value: String(Math.min(used, limit)), low: String(limit * 0.7), high: String(limit * 0.9), optimum: '0' }),
  );
}

export const home: Section = {
  title: 'Home',
  async render(into, { session }) {
    const [research, billing] = await Promise.all([
      call<ResearchStatus>('api', 'GET', '/v1/research/status'),
      call<BillingStatus>('api', 'GET', '/v1/billing/status'),
    ]);
    const step = nextStep(research.reason);
    const trust = research.trust ?? {};
    const free = research.freeTier ?? {};
    const ai = billing.balances.find((b) => b.scope === 'ai');
    into.append(
      h('dl', { class: 'facts' },
        h('dt', {}, 'Account'), h('dd', { class: 'mono', id: 'principal-id' }, session.principalId ?? ''),
        h('dt', {}, 'Red-team research'),
        h('dd', { id: 'research-status' },
          research.status === 'eligible' ? 'eligible' : `pending: ${research.reason ?? 'unknown'}`),
        h('dt', {}, 'Rung'), h('dd', { id: 'rung' }, trust.rung ? `${trust.rung}${trust.level ? ` (${trust.level})` : ''}` : 'none yet'),
        h('dt', {}, 'Rung expires'), h('dd', {}, dateText(trust.expiresAt)),
        h('dt', {}, 'Plan'), h('dd', { id: 'plan' }, billing.plan ?? 'none'),
        h('dt', {}, 'Balance'), h('dd', { id: 'balance' }, ai ? usd(ai.availableMicroUSD) : usd(0)),
      ),
      step ? h('p', {}, h('a', { class: 'button primary', href: step.href, id: 'next-step' }, step.label)) : '',
      h('h2', {}, 'Today'),
      free.limit !== undefined ? meter('Free allowance', free.used ?? 0, free.limit, free.unit ?? 'requests') : '',
      trust.tokensPerDay ? meter('Rung allowance', trust.tokensUsedToday ?? 0, trust.tokensPerDay, 'tokens') : '',
      h('p', { class: 'muted' }, `Allowances reset at ${dateText(free.resetsAt)}.`),
      h('h2', {}, 'Scopes'),
      research.scopes.length
        ? h('ul', { id: 'scopes' }, ...research.scopes.map((s) => h('li', {}, h('strong', {}, s.id), ` ${s.status}: ${s.tasks.join(', ')}`)))
        : h('p', { id: 'scopes' }, 'No scope yet: verifying a card approves the standard scope (code review).'),
    );
  },
};
