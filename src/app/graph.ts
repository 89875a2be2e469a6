/**
 * The graph listener ({graph_url}): a second stateless MCP server, over the same knowledge evidence as the
 * API's knowledge routes, as a graph. `POST /mcp`; GET and DELETE answer 405; everything else 404.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { singleExit } from './single-exit.js';
import { sharedKnowledge } from '../knowledge/index.js';
import { onFirstUse } from './on-first-use.js';

export function createGraphApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  // The MCP server is imported by the first request, the knowledge by the first call that reads it.
  router.all(
    '/mcp',
    onFirstUse(async () => {
      const [{ mcpEndpoint }, { createGraphMcpServer }] = await Promise.all([import('../mcp/http.js'), import('../mcp/graph-server.js')]);
      return mcpEndpoint(() => createGraphMcpServer(sharedKnowledge), () => deps.holder.current.gateway.limits.bodyBytes);
    }),
  );
  app.use(singleExit(deps.log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
