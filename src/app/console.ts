/**
 * The console listener: the account console ({console_url}): the pages where a person issues tokens, pays and manages the account.
 * It serves the console page and its assets (src/pages, built from web/); the page itself calls only the
 * documented API and auth routes, cross-origin with the session cookie. Anything else answers 404.
 */
import type Koa from 'koa';
import type { Deps } from './deps.js';
import { hostApp, type Front } from './host-app.js';
import { singleExit } from './single-exit.js';
import { servePages } from '../pages/serve.js';

export function createConsoleApp(deps: Deps, front: Front): Koa {
  const app = hostApp(front);
  app.use(singleExit(deps.log));
  // The console is one page; the payment processor sends a person back to /verification[/done] and
  // /billing[/done] (billing/sessions.ts), which open the matching section.
  const page = 'console.html';
  app.use(servePages({ '/': page, '/verification': page, '/verification/done': page, '/billing': page, '/billing/done': page }, deps.origins));
  return app;
}
