/**
 * The site listener ({site_url}): the MCP server and the public, machine-readable entry points.
 *
 *   POST /mcp                      MCP (streamable HTTP, stateless); GET/DELETE 405
 *   GET  /mcp.json                 the map: MCP endpoints, plain-HTTP tools with input schemas and URLs
 *   GET  /.well-known/mcp.json     the same map
 *   GET  /.well-known/oauth-protected-resource   RFC 9728 metadata: where a PAT for /mcp comes from
 *   GET  /llms.txt, /llms-full.txt generated from README.md and docs/
 *   GET  /agent-quickstart.md      the agent procedure with this deployment's URLs
 *   GET  /docs/<name>.md           each doc, so the links above resolve here
 *
 * Tool calls run through the API app in process (mcp/dispatch.ts), so they are the API routes' answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { hostApp, type Front } from './host-app.js';
import { singleExit } from './single-exit.js';
import { sharedKnowledge } from '../knowledge/index.js';
import { onFirstUse } from './on-first-use.js';
import { buildSiteDocuments } from '../site/entry-points.js';
import { holdsVersion, serveDocument, serveJson } from '../site/serve.js';
import { clientAddress, hitAddress, limitPerAddress, MCP_LIMIT, STATIC_LIMIT } from '../ratelimit/middleware.js';
import type { SiteDocuments, TextDocument } from '../site/entry-points.js';
import type { Context } from 'koa';

/** `api`: the API host's app, whose routes the MCP tools run through in process (with the API listener's front). */
export function createSiteApp(deps: Deps, front: Front, api: Koa): Koa {
  const app = hostApp(front);
  const router = new Router();
  const apiCallback = api.callback();
  // koa answers its own errors (ctx.onerror), so the promise never rejects and nothing waits on it.
  const apiHandler = (req: IncomingMessage, res: ServerResponse): void => void apiCallback(req, res);
  // Built by the first request for one: every doc twice over (each alone and all in llms-full.txt) is a few MiB
  // of heap that a worker nobody reads the docs from never needs.
  let built: SiteDocuments | undefined;
  const documents = () => (built ??= buildSiteDocuments(deps.origins));
  const bodyLimit = () => deps.holder.current.gateway.limits.bodyBytes;

  // The MCP server and the map (which names the SDK's protocol versions) are imported on first use.
  // Limited per client address like the API host's public routes; each tool call is then the API route's
  // call from that same address (behind a proxy, the address rateLimits.addressHeader names, not the proxy's).
  router.all(
    '/mcp',
    limitPerAddress(deps.limiter, deps.holder, MCP_LIMIT),
    onFirstUse(async () => {
      const [{ mcpEndpoint }, { createSiteMcpServer }, { admitMcpRequest }] = await Promise.all([
        import('../mcp/http.js'),
        import('../mcp/site-server.js'),
        import('../mcp/auth.js'),
      ]);
      // A PAT tool called without a valid PAT is an HTTP 401 with its challenge, before the MCP server runs.
      return mcpEndpoint(
        (ctx) => createSiteMcpServer(apiHandler, clientAddress(ctx, deps.holder)),
        bodyLimit,
        (ctx, body) => admitMcpRequest(ctx, deps.store, deps.origins, body),
      );
    }),
  );
  const map = onFirstUse(async () => {
    const { mcpMap } = await import('../discovery/profile.js');
    return (ctx) => serveJson(ctx, mcpMap(deps, sharedKnowledge()));
  });
  router.get('/mcp.json', map);
  router.get('/.well-known/mcp.json', map);
  router.get(
    '/.well-known/oauth-protected-resource',
    onFirstUse(async () => {
      const { protectedResourceMetadata } = await import('../mcp/auth.js');
      return (ctx) => serveJson(ctx, protectedResourceMetadata(deps.origins));
    }),
  );
  // The documents are large (llms-full.txt is every doc at once): limited per address, except an answer
  // of 304 to a client that already holds the version (its if-none-match names the ETag).
  const large = async (ctx: Context, d: TextDocument): Promise<void> => {
    if (!holdsVersion(ctx, d.etag)) await hitAddress(ctx, deps.limiter, deps.holder, STATIC_LIMIT);
    serveDocument(ctx, d);
  };
  router.get('/llms.txt', (ctx) => large(ctx, documents().llmsTxt));
  router.get('/llms-full.txt', (ctx) => large(ctx, documents().llmsFullTxt));
  router.get('/agent-quickstart.md', (ctx) => large(ctx, documents().quickstart));
  router.get('/docs/:name.md', async (ctx) => {
    const d = documents().docs.get(ctx.params['name']!);
    if (d) await large(ctx, d);
  });

  app.use(singleExit(deps.log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
