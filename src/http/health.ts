/**
 * Health on every listener, answered before any route or operator check (so a balancer or an orchestrator
 * can probe each port without a token):
 *
 * - `GET /healthz`: the process is alive and its event loop turns (always 200 while it answers at all).
 * - `GET /readyz`: this instance should be sent traffic: the runtime and its policy are loaded, the store
 *   answers a PING, and it is not draining. 503 `not-ready` names the checks that failed.
 * - `GET /metrics` (the admin listener only): the Prometheus text of src/metrics, every worker's added up
 *   under PORTCULLIS_WORKERS (src/worker-link.ts).
 */
import type { Context, Next } from 'koa';
import { ERRORS } from '../errors.js';
import { registry } from '../observe/metrics.js';
import { clusterMetrics, supervised } from '../worker-link.js';

/** Each readiness check by name: true when it passes. */
export type ReadinessProbe = () => Promise<Record<string, boolean>>;

export function healthRoutes(probe: ReadinessProbe, serveMetrics: boolean) {
  return async function health(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/healthz' || ctx.path === '/readyz' || (serveMetrics && ctx.path === '/metrics')) ctx.state.route = ctx.path;
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'alive' };
      return;
    }
    if (ctx.path === '/readyz') {
      const checks = await probe();
      const failed = Object.entries(checks).filter(([, ok]) => !ok).map(([name]) => name);
      ctx.set('cache-control', 'no-store');
      if (failed.length === 0) {
        ctx.body = { status: 'ready', checks };
        return;
      }
      ctx.status = 503;
      ctx.set('retry-after', '1');
      ctx.body = { error: { code: 'not-ready', message: `${ERRORS['not-ready'].message} (failed: ${failed.join(', ')})` } };
      return;
    }
    if (serveMetrics && ctx.path === '/metrics') {
      await probe(); // a store PING per scrape, so its round trip is in the series even without a balancer
      ctx.type = registry.contentType;
      // Under PORTCULLIS_WORKERS one scrape reaches one worker: the supervisor adds every worker's up.
      ctx.body = supervised() ? await clusterMetrics() : await registry.metrics();
      return;
    }
    return next();
  };
}
