/**
 * Verification: register a card (rung L1, through the payment processor's hosted setup page: registered,
 * never charged) or verify identity (L2, document plus selfie at the processor); the processor's page opens
 * and this page shows the state when the person comes back. Then apply for a research scope under the
 * acceptable-use policy in force, and see every application sent and where it stands (the list updates in
 * place when one is submitted). From /v1/research/ekyc/{start,status}, /v1/research/applications,
 * GET /v1/account/applications and GET /v1/secure (the AUP version).
 */
import { call, origins } from '../api.js';
import { busy, dateText, h } from '../dom.js';
import type { Section } from './section.js';
import { type ResearchStatus, reasonText } from './research.js';

/** GET /v1/research/ekyc/status: the overall state and the checks behind it (evidence references only). */
interface EkycStatus {
  state: 'none' | 'pending' | 'verified' | 'refused' | 'expired';
  reason: string | null;
  rung: string | null;
  level: string | null;
  expiresAt: string | null;
}

/** The verification state in words; the state's code stays beside it, small, for support. */
function ekycText(e: EkycStatus): string {
  switch (e.state) {
    case 'none':
      return 'Not verified yet.';
    case 'pending':
      return 'Started: the payment processor confirms it within seconds of your finishing there; reload to see it.';
    case 'verified':
      return `Verified${e.rung ? `: rung ${e.rung}${e.level ? ` (${e.level})` : ''}` : ''}.`;
    case 'refused':
      return e.reason ? reasonText(e.reason) : 'The payment processor did not accept it: try again, or with another card.';
    case 'expired':
      return 'Expired: verify again to keep red-team models open.';
  }
}

/** The acceptable-use policy in force, as GET /v1/secure publishes it with the rung table. */
interface Secure {
  rungs: { aup: { version: string } };
}

/** GET /v1/account/applications: the person's own applications and where each stands. */
interface Application {
  id: string;
  status: 'submitted' | 'approved' | 'refused';
  submittedAt: string;
  decidedAt: string | null;
  decisionNote: string | null;
  verificationMode: string;
  scope: { id: string; tasks: string[] };
}

/** An application's state in words: what it means for the person, and what happens next. */
function stateText(a: Application): string {
  if (a.status === 'approved') return `Approved ${dateText(a.decidedAt)}: the scope is open${a.decisionNote ? ` (“${a.decisionNote}”)` : ''}.`;
  if (a.status === 'refused')
    return `Refused ${dateText(a.decidedAt)}${a.decisionNote ? `: “${a.decisionNote}”` : ''}. You can apply again with what was missing.`;
  return 'Waiting for review: an operator approves or refuses it; this list shows the outcome.';
}

function applicationsTable(apps: Application[]): HTMLElement {
  if (!apps.length) return h('p', {}, 'No application yet.');
  return h(
    'table',
    {},
    h('caption', {}, 'Your applications, oldest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Scope'),
        h('th', { scope: 'col' }, 'Tasks'),
        h('th', { scope: 'col' }, 'Mode'),
        h('th', { scope: 'col' }, 'Sent'),
        h('th', { scope: 'col' }, 'State'),
      ),
    ),
    h(
      'tbody',
      {},
      ...apps.map((a) =>
        h(
          'tr',
          { 'data-application-id': a.id, 'data-status': a.status },
          h('td', {}, a.scope.id),
          h('td', {}, a.scope.tasks.join(', ')),
          h('td', {}, a.verificationMode),
          h('td', {}, dateText(a.submittedAt)),
          // The id stays beside the words, small, for support.
          h('td', {}, stateText(a), ' ', h('code', { class: 'code-ref', title: 'for support' }, a.id)),
        ),
      ),
    ),
  );
}

function field(id: string, label: string, input: HTMLElement, hint?: string): HTMLElement {
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), hint ? h('p', { class: 'muted', id: `${id}-hint` }, hint) : '', input);
}

export const verification: Section = {
  title: 'Verification',
  async render(into, { errorBox }) {
    const listApplications = async () => (await call<{ data: Application[] }>('api', 'GET', '/v1/account/applications')).data;
    const [ekyc, research, secure, applications] = await Promise.all([
      call<EkycStatus>('api', 'GET', '/v1/research/ekyc/status'),
      call<ResearchStatus>('api', 'GET', '/v1/research/status'),
      call<Secure>('api', 'GET', '/v1/secure'),
      listApplications(),
    ]);
    const applicationList = h('div', { id: 'applications' }, applicationsTable(applications));
    const start = (label: string, tasks: string[]) => {
      const button = h('button', { type: 'button', class: 'primary' }, label);
      button.addEventListener(
        'click',
        () =>
          void busy(button, errorBox, async () => {
            const { url } = await call<{ url: string }>('api', 'POST', '/v1/research/ekyc/start', { scopeId: 'owned', tasks });
            // The processor's hosted page; it sends the person back to the console when done.
            location.assign(url);
          }),
      );
      return button;
    };
    const hasCard = research.trust.rung !== null;

    const version = secure.rungs.aup.version;
    const form = h(
      'form',
      { id: 'application-form' },
      h('h2', {}, 'Apply for a research scope'),
      h(
        'p',
        {},
        `Under the acceptable-use policy version ${version} (`,
        h('a', { href: `${origins().api}/v1/secure`, id: 'aup-link', target: '_blank', rel: 'noopener' }, 'read the policy and the rules in force'),
        ').',
      ),
      field(
        'app-mode',
        'Verification mode',
        h(
          'select',
          { name: 'verificationMode' },
          h('option', { value: 'card' }, 'card (L1)'),
          h('option', { value: 'identity' }, 'identity (L2)'),
          h('option', { value: 'business' }, 'business (L3, operator review)'),
          h('option', { value: 'contracted' }, 'contracted (L4, operator review)'),
        ),
      ),
      field(
        'app-scope',
        'Scope id',
        h('input', { name: 'scopeId', required: true, pattern: '[a-z0-9][a-z0-9-]{0,62}', value: 'owned' }),
        'lower-case letters, digits and dashes',
      ),
      field('app-tasks', 'Tasks (comma-separated)', h('input', { name: 'tasks', required: true, value: 'code-review' })),
      field(
        'app-authorization',
        'Authority for the targets',
        h(
          'select',
          { name: 'authorization' },
          h('option', { value: 'owned' }, 'I own them'),
          h('option', { value: 'written-permission' }, 'written permission'),
          h('option', { value: 'bug-bounty' }, 'a bug-bounty programme'),
          h('option', { value: 'contract' }, 'a contract'),
        ),
      ),
      field('app-target', 'Target (repository, domain, application …)', h('input', { name: 'target', required: true })),
      field('app-purpose', 'Purpose', h('textarea', { name: 'purpose', required: true, minlength: '10', rows: '3' })),
      h(
        'div',
        { class: 'check' },
        h('input', { type: 'checkbox', id: 'app-aup', name: 'aup', required: true }),
        h('label', { for: 'app-aup' }, `I accept the acceptable-use policy ${version}`),
      ),
      h(
        'div',
        { class: 'check' },
        h('input', { type: 'checkbox', id: 'app-local', name: 'local', required: true }),
        h('label', { for: 'app-local' }, 'I understand the service runs no tools: tool calls come back to me and I run them'),
      ),
      h('button', { type: 'submit' }, 'Submit application'),
      h('p', { id: 'application-result', role: 'status' }),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const f = new FormData(form);
      const text = (k: string) => ((f.get(k) as string | null) ?? '').trim();
      void busy(form.querySelector('button[type=submit]')!, errorBox, async () => {
        const app = await call<{ id: string; status: string; scope: { id: string } }>('api', 'POST', '/v1/research/applications', {
          verificationMode: text('verificationMode'),
          policyVersion: version,
          consent: { acceptableUse: true, localExecutionBoundary: true },
          authorizedResearch: { authorization: text('authorization'), targets: [{ kind: 'other', identifier: text('target') }] },
          purpose: text('purpose'),
          scope: {
            id: text('scopeId'),
            tasks: text('tasks')
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
          },
        });
        form.reset();
        applicationList.replaceChildren(applicationsTable(await listApplications()));
        form.querySelector('#application-result')!.textContent =
          `Application sent for scope ${app.scope.id}: it is waiting for review, listed under Your applications.`;
      });
    });

    into.append(
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Verification'),
        h('dd', { id: 'ekyc-state' }, ekycText(ekyc), ' ', h('code', { class: 'code-ref', title: 'for support' }, ekyc.reason ?? ekyc.state)),
        h('dt', {}, 'Research status'),
        h(
          'dd',
          { id: 'research-status' },
          ...(research.status === 'eligible'
            ? ['Eligible: you can call red-team models.']
            : [reasonText(research.reason), ' ', h('code', { class: 'code-ref', title: 'for support' }, research.reason ?? 'pending')]),
        ),
        h('dt', {}, 'Expires'),
        h('dd', {}, dateText(ekyc.expiresAt)),
      ),
      h('h2', {}, 'Verify'),
      h('p', {}, 'The payment processor’s page opens; the evidence stays with the processor. Come back here when it is done.'),
      h(
        'div',
        { class: 'actions' },
        start(hasCard ? 'Register another card' : 'Verify a card (L1)', ['code-review']),
        hasCard ? start('Verify identity (L2)', ['code-review']) : '',
      ),
      h('h2', {}, 'Your applications'),
      applicationList,
      form,
    );
  },
};
