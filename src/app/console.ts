/**
 * The console listener: the account console ({console_url}): the pages where a person issues tokens, pays and manages the account.
 * It serves the console page and its assets (src/pages, built from web/); the page itself calls only the
 * documented API and auth routes, cross-origin with the session cookie. Anything else answers 404.
 */
import Koa from 'koa';
import type { Deps } from './deps.js';
import { singleExit } from './single-exit.js';
import { servePages } from '../pages/serve.js';

export function createConsoleApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  app.use(singleExit(deps.log));
  app.use(servePages({ '/': 'console.html' }, deps.origins));
  return app;
}
