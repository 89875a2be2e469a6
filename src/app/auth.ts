/**
 * The auth listener ({auth_url}): sign-in. Ceremonies (passkeys, SIWE, CACAO, TOTP, recovery) end by
 * starting a session; the routes are listed here in the order a person meets them.
 *
 * The host has no profile file and no health route: `/ready` and every `/.well-known/...` answer 404, as
 * the spec says, because nothing here is mounted on them.
 */
import Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { singleExit } from './single-exit.js';

export function createAuthApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  app.use(singleExit(deps.log));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
