/**
 * The graph listener ({graph_url}): a second stateless MCP server, over the same knowledge evidence as the
 * API's knowledge routes, as a graph. `POST /mcp`; GET and DELETE answer 405; everything else 404.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { singleExit } from './single-exit.js';
import { onFirstUse } from './on-first-use.js';
import { GatewayError } from '../errors.js';
import { limitPerAddress, MCP_LIMIT } from '../ratelimit/middleware.js';

export function createGraphApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  // Limited per client address; the MCP server is imported by the first request, and the queries run in
  // worker threads (mcp/graph-pool.ts), which load the knowledge themselves: none of it on this event loop.
  router.all(
    '/mcp',
    limitPerAddress(deps.limiter, deps.holder, MCP_LIMIT),
    onFirstUse(async () => {
      const [{ mcpEndpoint }, { createGraphMcpServer }, { GraphPool }] = await Promise.all([import('../mcp/http.js'), import('../mcp/graph-server.js'), import('../mcp/graph-pool.js')]);
      const settings = () => {
        const g = deps.holder.current.gateway.graph ?? {};
        return { workers: g.workers ?? 1, queue: g.queue ?? 8, callMs: g.callMs ?? 2_000 };
      };
      const pool = new GraphPool(settings);
      const endpoint = mcpEndpoint(() => createGraphMcpServer(pool.run), () => deps.holder.current.gateway.limits.bodyBytes);
      // At most workers + queue requests in hand at once, counted from arrival to answer (the SDK's own work
      // per request is on this event loop too); the next is answered 503 before it is read: shedding must
      // cost less than serving.
      let inHand = 0;
      return async (ctx) => {
        const { workers, queue } = settings();
        if (ctx.method === 'POST' && (inHand >= workers + queue || pool.full)) {
          ctx.set('retry-after', '1');
          throw new GatewayError('tool-busy');
        }
        inHand++;
        ctx.res.once('close', () => inHand--);
        return endpoint(ctx);
      };
    }),
  );
  app.use(singleExit(deps.log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
