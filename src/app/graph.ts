/**
 * The graph listener ({graph_url}): a second stateless MCP server, over the same knowledge evidence as the
 * API's knowledge routes, as a graph. `POST /mcp`; GET and DELETE answer 405; everything else 404.
 *
 * Bounded so that no load on it slows another host: requests in hand are capped (`graph.workers +
 * graph.queue`; the next is answered 503 `tool-busy` before anything else is done for it, not even the
 * per-address count), then limited per client address, and the queries themselves run in worker threads
 * (mcp/graph-pool.ts), which load the knowledge: none of it on this event loop.
 */
import type Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { hostApp, type Front } from './host-app.js';
import { singleExit } from './single-exit.js';
import { onFirstUse } from './on-first-use.js';
import { GatewayError } from '../errors.js';
import { limitPerAddress, MCP_LIMIT } from '../ratelimit/middleware.js';
import { GraphPool } from '../mcp/graph-pool.js';

export function createGraphApp(deps: Deps, front: Front): Koa {
  const app = hostApp(front);
  const router = new Router();
  const settings = () => {
    const g = deps.holder.current.gateway.graph ?? {};
    return { workers: g.workers ?? 1, queue: g.queue ?? 8, callMs: g.callMs ?? 2_000 };
  };
  // No thread starts until the first call.
  const pool = new GraphPool(settings);
  let inHand = 0;
  router.all(
    '/mcp',
    async function shedWhenFull(ctx, next) {
      if (ctx.method !== 'POST') {
        await next();
        return;
      }
      const { workers, queue } = settings();
      if (inHand >= workers + queue || pool.full) {
        ctx.set('retry-after', '1');
        throw new GatewayError('tool-busy');
      }
      inHand++;
      ctx.res.once('close', () => inHand--);
      await next();
    },
    limitPerAddress(deps.limiter, deps.holder, MCP_LIMIT),
    // The MCP server is imported by the first request.
    onFirstUse(async () => {
      const [{ mcpEndpoint }, { createGraphMcpServer }] = await Promise.all([import('../mcp/http.js'), import('../mcp/graph-server.js')]);
      return mcpEndpoint(
        () => createGraphMcpServer(pool.run),
        () => deps.holder.current.gateway.limits.bodyBytes,
      );
    }),
  );
  app.use(singleExit(deps.log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
