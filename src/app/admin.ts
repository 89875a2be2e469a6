/**
 * The operator plane: an admin API on its own loopback listener, behind the operator token
 * (`PORTCULLIS_ADMIN_TOKEN`). It is how operators run without the payment processor — principals, rungs,
 * scopes, tokens, reloads — and what the `portcullis admin` CLI speaks to.
 */
import type { default as Koa, Context } from 'koa';
import { Router } from '@koa/router';
import { createHash } from 'node:crypto';
import { operatorOnly, type Operator } from './operators.js';
import { configDump } from './config-dump.js';
import type { Deps } from './deps.js';
import { hostApp, type Front } from './host-app.js';
import { singleExit } from './single-exit.js';
import { GatewayError } from '../errors.js';
import { reloadEveryWorker, supervised, workerIndex, type WorkerReload } from '../worker-link.js';
import { readJson, readOptionalJson } from '../http/read-json.js';
import { mountBillingAdmin } from './admin-billing.js';
import { mountReviewsAdmin } from './admin-reviews.js';
import { mountApplicationsAdmin } from './admin-applications.js';
import { mountDataKeyAdmin } from './admin-data-key.js';
import { mountDecisionsAdmin } from '../decisions/admin-routes.js';
import { approveScope, createPrincipal, issueToken, requirePrincipal, revokeToken } from '../auth/principals.js';
import { operatorGrant } from '../billing/verification.js';

/** `limit` (1..500, default 100) and `cursor` of a paged listing, from the query. */
function page(ctx: Context): { limit: number; cursor: string | null } {
  const raw = ctx.query['limit'];
  const limit = raw === undefined ? 100 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500)
    throw new GatewayError('invalid-request', 'limit must be a whole number from 1 to 500', { param: 'limit' });
  const cursor = typeof ctx.query['cursor'] === 'string' && ctx.query['cursor'] !== '' ? ctx.query['cursor'] : null;
  return { limit, cursor };
}

const str = (v: unknown, field: string): string => {
  if (typeof v !== 'string' || v.length === 0) throw new GatewayError('invalid-request', `${field} must be a non-empty string`);
  return v;
};

export function createAdminApp(
  deps: Deps,
  front: Front,
  adminToken: string,
  operators: Operator[] = [{ name: 'operator', scope: 'full', digest: createHash('sha256').update(adminToken).digest() }],
): Koa {
  const { store, holder } = deps;
  const app = hostApp(front);
  const router = new Router({ prefix: '/admin' });
  const body = async (ctx: Context) => ((await readJson(ctx, holder.current.gateway.limits.bodyBytes)) ?? {}) as Record<string, unknown>;

  router.post('/principals', async (ctx) => {
    const b = ((await readOptionalJson(ctx, holder.current.gateway.limits.bodyBytes)) ?? {}) as Record<string, unknown>;
    const opts: { tenant?: string; username?: string } = {};
    if (b['tenant'] !== undefined) opts.tenant = str(b['tenant'], 'tenant');
    if (b['username'] !== undefined) opts.username = str(b['username'], 'username');
    ctx.status = 201;
    ctx.body = await createPrincipal(store, holder.current, opts);
  });
  // Paged: `?limit=` (1..500) and `?cursor=` (the `next` of the page before); `next` is null on the last page.
  router.get('/principals', async (ctx) => {
    const { limit, cursor } = page(ctx);
    const { ids, next } = await store.listPrincipals(cursor, limit);
    const records = await Promise.all(ids.map((id) => store.getPrincipal(id)));
    const data = records.filter((p) => p !== null).map((p) => ({ id: p.id, username: p.username, rung: p.rung?.id ?? null, createdAt: p.createdAt }));
    ctx.body = { data, next };
  });
  router.get('/principals/:id', async (ctx) => {
    ctx.body = await requirePrincipal(store, ctx.params['id']!);
  });
  router.post('/principals/:id/rung', async (ctx) => {
    const b = await body(ctx);
    ctx.body = await operatorGrant(deps, ctx.params['id']!, str(b['rung'], 'rung'), b['screeningReference']);
  });
  router.post('/principals/:id/scopes', async (ctx) => {
    const b = await body(ctx);
    const tasks = b['tasks'];
    if (!Array.isArray(tasks) || !tasks.every((t) => typeof t === 'string')) throw new GatewayError('invalid-request', 'tasks must be a list of task names');
    ctx.body = await approveScope(store, holder.current, ctx.params['id']!, str(b['scope'], 'scope'), tasks);
  });
  router.post('/principals/:id/tokens', async (ctx) => {
    const b = await body(ctx);
    const format = b['format'] === undefined ? 'v2' : b['format'];
    if (format !== 'v1' && format !== 'v2') throw new GatewayError('invalid-request', 'format must be v1 or v2');
    ctx.status = 201;
    ctx.body = await issueToken(store, ctx.params['id']!, str(b['label'], 'label'), format);
  });
  router.get('/principals/:id/tokens', async (ctx) => {
    await requirePrincipal(store, ctx.params['id']!);
    const { limit, cursor } = page(ctx);
    // In creation order; the cursor is the position after the last one handed out.
    const from = cursor === null ? 0 : Number.parseInt(cursor, 10);
    if (!Number.isInteger(from) || from < 0) throw new GatewayError('invalid-request', 'cursor is not one this listing gave', { param: 'cursor' });
    const tokens = (await store.listTokens(ctx.params['id']!)).slice(from, from + limit + 1);
    const data = tokens.slice(0, limit).map((t) => ({ id: t.id, label: t.label, format: t.format, createdAt: t.createdAt, revokedAt: t.revokedAt }));
    ctx.body = { data, next: tokens.length > limit ? String(from + limit) : null };
  });
  router.post('/tokens/revoke-legacy', async (ctx) => {
    ctx.body = { revoked: await store.revokeLegacyTokens(new Date().toISOString()) };
  });
  router.post('/tokens/:id/revoke', async (ctx) => {
    const t = await revokeToken(store, ctx.params['id']!);
    ctx.body = { id: t.id, label: t.label, revokedAt: t.revokedAt };
  });
  router.get('/receipts/:id', async (ctx) => {
    const r = await store.getReceipt(ctx.params['id']!);
    if (!r) throw new GatewayError('not-found', 'no such receipt');
    ctx.body = r;
  });
  mountBillingAdmin(router, deps);
  mountReviewsAdmin(router, deps);
  mountApplicationsAdmin(router, deps);
  mountDataKeyAdmin(router, deps);
  mountDecisionsAdmin(router, deps);
  // Every worker reloads (under PORTCULLIS_WORKERS the supervisor asks each one) and the answer names each
  // worker's result, so an operator sees that all of them serve the same versions.
  router.post('/reload', async (ctx) => {
    const workers: WorkerReload[] = supervised()
      ? await reloadEveryWorker('admin api')
      : [{ worker: workerIndex(), pid: process.pid, ...(await holder.reload('admin api')) }];
    const refused = workers.filter((w) => !w.ok);
    if (refused.length > 0) {
      const problems = [...new Set(refused.flatMap((w) => (w.ok ? [] : w.problems)))];
      throw new GatewayError('config-invalid', problems.join('; '));
    }
    // Start-only settings changed on disk are not in effect until a restart: say so rather than "applied".
    const needsRestart = [...new Set(workers.flatMap((w) => (w.ok ? w.needsRestart : [])))].sort();
    ctx.body = { ok: true, versions: holder.current.versions, needsRestart, workers };
  });
  // The configuration served, every document as loaded, secrets masked (src/app/config-dump.ts).
  router.get('/config', (ctx) => {
    ctx.body = configDump(holder.current, holder.started);
  });
  // `worker`: which process answered (its index under PORTCULLIS_WORKERS, 1 alone, and its pid), so an operator
  // can see the workers a port spreads connections over.
  router.get('/runtime', (ctx) => {
    ctx.body = { versions: holder.current.versions, store: store.kind, worker: { index: workerIndex(), pid: process.pid } };
  });

  app.use(singleExit(deps.log));
  // Refusals are decided before routing: the router says which pattern the path matches, for the log.
  const routeOf = (ctx: { path: string; method: string }) => {
    const layers = router.match(ctx.path, ctx.method);
    const layer = layers.pathAndMethod.at(-1) ?? layers.path.at(-1);
    return layer && typeof layer.path === 'string' ? layer.path : null;
  };
  app.use(operatorOnly(operators, deps.log, routeOf));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
