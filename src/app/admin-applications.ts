/**
 * The operator plane's research applications (mounted by admin.ts, behind the operator token):
 *   GET  /admin/applications?status=submitted|approved|refused   oldest first
 *   GET  /admin/applications/:id
 *   POST /admin/applications/:id/approve   {note?}    approves its scope with its tasks (and, for the
 *                                                     business and contracted modes, grants that rung)
 *   POST /admin/applications/:id/refuse    {reason}   the principal sees the reason in research status
 * A principal's verification checks (card, identity, screening) are read with GET /admin/principals/:id/verification.
 */
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { GatewayError } from '../errors.js';
import { readOptionalJson } from '../http/read-json.js';
import { approveApplication, refuseApplication } from '../billing/applications.js';
import { requirePrincipal } from '../auth/principals.js';
import type { ApplicationRecord } from '../billing/store.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type ApplicationsAdminDeps = Pick<Deps, 'billing' | 'holder' | 'log' | 'meter' | 'origins' | 'store' | 'stripe'>;

const STATUSES = new Set(['submitted', 'approved', 'refused']);

function note(v: unknown, field: string, required: boolean): string | null {
  if (v === undefined && !required) return null;
  if (typeof v !== 'string' || v.length === 0 || v.length > 1000) throw new GatewayError('invalid-request', `${field} must be a string of 1-1000 characters`);
  return v;
}

export function mountApplicationsAdmin(router: Router, deps: ApplicationsAdminDeps): void {
  const body = async (ctx: Context) => ((await readOptionalJson(ctx, deps.holder.current.gateway.limits.bodyBytes)) ?? {}) as Record<string, unknown>;

  router.get('/applications', async (ctx) => {
    const status = ctx.query['status'];
    if (status !== undefined && (typeof status !== 'string' || !STATUSES.has(status))) {
      throw new GatewayError('invalid-request', 'status must be submitted, approved or refused');
    }
    ctx.body = { data: await deps.billing.listApplications(status as ApplicationRecord['status'] | undefined) };
  });
  router.get('/applications/:id', async (ctx) => {
    const app = await deps.billing.getApplication(ctx.params['id']!);
    if (!app) throw new GatewayError('application-not-found');
    ctx.body = app;
  });
  router.post('/applications/:id/approve', async (ctx) => {
    const b = await body(ctx);
    ctx.body = await approveApplication(deps, ctx.params['id']!, note(b['note'], 'note', false));
  });
  router.post('/applications/:id/refuse', async (ctx) => {
    const b = await body(ctx);
    ctx.body = await refuseApplication(deps, ctx.params['id']!, note(b['reason'], 'reason', true)!);
  });
  router.get('/principals/:id/verification', async (ctx) => {
    const p = await requirePrincipal(deps.store, ctx.params['id']!);
    ctx.body = { principalId: p.id, rung: p.rung, checks: await deps.billing.checks(p.id), customer: await deps.billing.customerOf(p.id) };
  });
}
