/**
 * The principal's research routes (API host, `pat / cookie`):
 *   GET  /v1/research/status        {status, reason, freeTier, trust, scopes} (src/billing/research-status.ts)
 *   POST /v1/research/ekyc/start    {scopeId, tasks} -> {url, kind, sessionId, expiresAt}: the payment
 *                                   processor's page a person completes (card setup, or identity with a card)
 *   GET  /v1/research/ekyc/status   the verification state, evidence reference and expiry; never the evidence
 *   POST /v1/research/applications  the application body (src/billing/schemas.ts) -> 202 {id, status, ...}
 * The agent only relays a URL; it never completes a verification itself.
 */
import type { Context } from 'koa';
import type { PrincipalRecord } from '../store/store.js';
import type { BillingDeps } from '../billing/deps.js';
import { researchStatus } from '../billing/research-status.js';
import { checkShape } from '../billing/schemas.js';
import { checkTasks, submitApplication } from '../billing/applications.js';
import { requireProcessor } from '../billing/stripe.js';
import { startCardVerification, startIdentityVerification } from '../billing/sessions.js';
import { validRung } from '../billing/verification.js';
import { ekycState } from '../billing/ekyc-status.js';
import { readJson } from '../http/read-json.js';

/** Who is calling (auth/caller.ts resolves it): the principal, or the 401/403 that says why not. */
export type WhoCalls = (ctx: Context) => Promise<{ principal: PrincipalRecord }>;

/**
 * `admitApplication` bounds what one account can file (rateLimits.applicationsPerAccountDay, wired in
 * app/api.ts); `limits.applicationBytes` bounds each application's size (413 past it).
 */
export function researchRoutes(d: BillingDeps, caller: WhoCalls, admitApplication: (principalId: string, ctx: Context) => Promise<void> = async () => {}) {
  const limit = () => d.holder.current.gateway.limits.bodyBytes;
  const applicationLimit = () => Math.min(limit(), d.holder.current.gateway.limits.applicationBytes ?? limit());
  return {
    status: async (ctx: Context): Promise<void> => {
      const { principal } = await caller(ctx);
      ctx.set('cache-control', 'no-store');
      ctx.body = await researchStatus(d, d.holder.current, principal);
    },
    ekycStart: async (ctx: Context): Promise<void> => {
      const { principal } = await caller(ctx);
      const body = checkShape<{ scopeId: string; tasks: string[] }>('ekycStart', await readJson(ctx, limit()));
      checkTasks(d.holder.current, body.tasks, 'tasks');
      requireProcessor(d.stripe);
      // Without a verified rung the first step is the card; with one, the identity check (L2) on top of it.
      const page =
        validRung(principal, Date.now()) === null ? await startCardVerification(d, principal.id, body) : await startIdentityVerification(d, principal.id, body);
      await d.billing.putCheck(principal.id, page.kind === 'card' ? 'card' : 'identity', {
        state: 'pending',
        reason: null,
        evidenceRef: page.sessionId,
        // The processor stamps events in whole seconds: a pending mark ranks before any event of its second.
        at: Math.floor(Date.now() / 1000) * 1000 - 1,
        expiresAt: page.expiresAt,
      });
      ctx.body = page;
    },
    ekycStatus: async (ctx: Context): Promise<void> => {
      const { principal } = await caller(ctx);
      ctx.set('cache-control', 'no-store');
      ctx.body = ekycState(d.holder.current, principal, await d.billing.checks(principal.id));
    },
    apply: async (ctx: Context): Promise<void> => {
      const { principal } = await caller(ctx);
      const app = await submitApplication(d, principal.id, await readJson(ctx, applicationLimit()), () => admitApplication(principal.id, ctx));
      ctx.status = 202;
      ctx.body = { id: app.id, status: app.status, submittedAt: app.submittedAt, verificationMode: app.request.verificationMode, scope: app.request.scope };
    },
  };
}
