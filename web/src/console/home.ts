/**
 * Home: who is signed in, whether red-team calls are open (and the next step when not), the rung and its
 * expiry, the approved scopes, the day's free allowance and rung allowance as meters, and the balance and
 * plan. From GET /v1/session, /v1/research/status, /v1/billing/status, /v1/usage?days=1 (the day's
 * counters) and /v1/secure (the rung table).
 */
import { call } from '../api.js';
import { dateText, h, usd } from '../dom.js';
import type { Section } from './section.js';
import { type BillingStatus, type ResearchStatus, type Today, nextStep, reasonText } from './research.js';

function meter(id: string, label: string, used: number, limit: number, unit: string): HTMLElement {
  return h(
    'div',
    { class: 'meter' },
    h('label', { for: id }, `${label}: ${used.toLocaleString('en-US')} of ${limit.toLocaleString('en-US')} ${unit} used`),
    h('meter', {
      id,
      min: '0',
      max: String(Math.max(limit, 1)),
      value: String(Math.min(used, limit)),
      low: String(limit * 0.7),
      high: String(limit * 0.9),
      optimum: '0',
    }),
  );
}

/** A scope's status in words. */
const SCOPE_STATUS: Record<string, string> = {
  approved: 'approved',
  pending: 'waiting for review',
  submitted: 'waiting for review',
  refused: 'refused',
  expired: 'expired',
};

/** The screening status in words. */
const SCREENING: Record<string, string> = {
  'not-required': 'not needed at your level',
  clear: 'clear',
  pending: 'in progress',
  expired: 'expired',
  failed: 'not passed',
};

interface RungRow {
  rung: string;
  level: string;
  tokensPerDay: number;
  ceilingPerDay: number;
}

export const home: Section = {
  title: 'Home',
  async render(into, { session }) {
    const [research, billing, usage, secure] = await Promise.all([
      call<ResearchStatus>('api', 'GET', '/v1/research/status'),
      call<BillingStatus>('api', 'GET', '/v1/billing/status'),
      call<{ today: Today }>('api', 'GET', '/v1/usage?days=1'),
      call<{ rungs?: { table?: RungRow[] } }>('api', 'GET', '/v1/secure'),
    ]);
    const step = nextStep(research.reason);
    const { trust, freeTier } = research;
    const rung = secure.rungs?.table?.find((r) => r.rung === trust.rung);
    const ai = billing.balances.find((b) => b.scope === 'ai');
    into.append(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Account'),
        h('dd', { class: 'mono', id: 'principal-id' }, session.principalId ?? ''),
        h('dt', {}, 'Red-team research'),
        h(
          'dd',
          { id: 'research-status' },
          ...(research.status === 'eligible'
            ? ['Eligible: you can call red-team models.']
            : [reasonText(research.reason), ' ', h('code', { class: 'code-ref', title: 'for support' }, research.reason ?? 'pending')]),
        ),
        h('dt', {}, 'Rung'),
        h('dd', { id: 'rung' }, trust.rung ? `${trust.rung}${trust.level ? ` (${trust.level})` : ''}` : 'none yet'),
        h('dt', {}, 'Rung expires'),
        h('dd', {}, dateText(trust.expiresAt)),
        h('dt', {}, 'Screening'),
        h(
          'dd',
          {},
          `${SCREENING[trust.screening.status] ?? trust.screening.status}${trust.screening.expiresAt ? `, until ${dateText(trust.screening.expiresAt)}` : ''}`,
        ),
        h('dt', {}, 'Plan'),
        h('dd', { id: 'plan' }, billing.plan ?? 'none'),
        h('dt', {}, 'Balance'),
        h('dd', { id: 'balance' }, usd(ai?.availableMicroUSD ?? 0)),
      ),
      step ? h('p', {}, h('a', { class: 'button primary', href: step.href, id: 'next-step' }, step.label)) : '',
      h('h2', {}, 'Today'),
      meter('free-meter', 'Free allowance', freeTier.used, freeTier.perDay, freeTier.unit),
      rung ? meter('rung-meter', `Rung allowance (${rung.rung})`, usage.today.rungTokensUsed + usage.today.rungTokensHeld, rung.tokensPerDay, 'tokens') : '',
      h('p', { class: 'muted' }, `Allowances reset at ${dateText(freeTier.resetsAt)}.`),
      h('h2', {}, 'Scopes'),
      research.scopes.length
        ? h(
            'ul',
            { id: 'scopes' },
            ...research.scopes.map((s) => h('li', {}, h('strong', {}, s.id), ` ${SCOPE_STATUS[s.status] ?? s.status}: ${s.tasks.join(', ')}`)),
          )
        : h('p', { id: 'scopes' }, 'No scope yet: verifying a card approves the standard scope (code review).'),
    );
  },
};
