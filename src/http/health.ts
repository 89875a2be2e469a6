/**
 * Health on every listener, answered before any route or operator check (so a balancer or an orchestrator
 * can probe each port without a token):
 *
 * - `GET /healthz`: the process is alive and its event loop turns (always 200 while it answers at all).
 * - `GET /readyz`: this instance should be sent traffic: the runtime and its policy are loaded, the store
 *   answers a PING, and it is not draining. 503 `not-ready` names the checks that failed.
 * - `GET /metrics` (the admin listener only): the Prometheus text of src/metrics, every worker's added up
 *   under PORTCULLIS_WORKERS (src/worker-link.ts), for a caller with
 *   `Authorization: Bearer <operator token>` or the scrape token whose SHA-256 is `metrics.scrapeTokenSha256`
 *   (a scraper need not hold the operator token); otherwise 401 `admin-unauthorized`. The series name
 *   routes, upstreams and volumes: not for strangers even on a private port.
 */
import type { Context, Next } from 'koa';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ERRORS, GatewayError, toWire } from '../errors.js';
import { registry } from '../observe/metrics.js';
import { clusterMetrics, supervised } from '../worker-link.js';

/** Each readiness check by name: true when it passes. */
export type ReadinessProbe = () => Promise<Record<string, boolean>>;

/** Whether a bearer token may read /metrics. */
export type ScrapeCheck = (token: string) => boolean;

/**
 * The operator token, or the scrape token named by its SHA-256 hex (read on each scrape, so a reload
 * applies). Digests are compared, in constant time, never the tokens.
 */
export function scrapeCheck(adminToken: string, scrapeTokenSha256: () => string | undefined): ScrapeCheck {
  const operator = createHash('sha256').update(adminToken).digest();
  return (token) => {
    const given = createHash('sha256').update(token).digest();
    const scrape = scrapeTokenSha256();
    const other = scrape && /^[0-9a-f]{64}$/.test(scrape) ? Buffer.from(scrape, 'hex') : null;
    return timingSafeEqual(given, operator) || (other !== null && timingSafeEqual(given, other));
  };
}

export function healthRoutes(probe: ReadinessProbe, serveMetrics: boolean, mayScrape: ScrapeCheck = () => false) {
  // Not async for what it does not answer (every POST, a chat call among them): no layer of its own then.
  return function health(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    return probes(ctx, next);
  };

  async function probes(ctx: Context, next: Next): Promise<void> {
    if (ctx.path === '/healthz' || ctx.path === '/readyz' || (serveMetrics && ctx.path === '/metrics')) ctx.state.route = ctx.path;
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'alive' };
      return;
    }
    if (ctx.path === '/readyz') {
      const checks = await probe();
      const failed = Object.entries(checks)
        .filter(([, ok]) => !ok)
        .map(([name]) => name);
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
      const token = /^Bearer[ \t]+(\S+)$/i.exec(ctx.get('authorization'))?.[1];
      if (token === undefined || !mayScrape(token)) {
        const refused = new GatewayError(
          'admin-unauthorized',
          'GET /metrics needs Authorization: Bearer <operator token> or the scrape token of metrics.scrapeTokenSha256',
        );
        ctx.status = refused.status;
        ctx.set('www-authenticate', 'Bearer');
        ctx.body = toWire(refused);
        return;
      }
      await probe(); // a store PING per scrape, so its round trip is in the series even without a balancer
      ctx.type = registry.contentType;
      // Under PORTCULLIS_WORKERS one scrape reaches one worker: the supervisor adds every worker's up.
      ctx.body = supervised() ? await clusterMetrics() : await registry.metrics();
      return;
    }
    await next();
  }
}
