/**
 * The site listener: the public site ({site_url}): the MCP server and the machine-readable entry points (/mcp.json, /llms.txt, ...).
 * Declared now so that every host of the spec has its listener and public origin; until its issue lands it
 * has no routes, and everything answers 404 `not-found` through the single exit.
 */
import Koa from 'koa';
import type { Deps } from './deps.js';
import { singleExit } from './single-exit.js';

export function createSiteApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  app.use(singleExit(deps.log));
  return app;
}
