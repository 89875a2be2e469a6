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
import { servePages } from '../pages/serve.js';
import { consoleCors } from '../pages/console-cors.js';
import { signInMethods } from '../routes/sign-in-methods.js';
import { endAllSessions, endSession, getSession } from '../routes/session.js';
import { loginOptions, loginVerify, registerOptions, registerVerify } from '../routes/passkey.js';
import { totpConfirm, totpEnrol, totpVerify } from '../routes/totp.js';

export function createAuthApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  const router = new Router();
  router.post('/v1/passkey/register/options', registerOptions(deps));
  router.post('/v1/passkey/register/verify', registerVerify(deps));
  router.post('/v1/passkey/login/options', loginOptions(deps));
  router.post('/v1/passkey/login/verify', loginVerify(deps));
  router.post('/v1/totp/verify', totpVerify(deps));
  router.post('/v1/totp/enrol', totpEnrol(deps));
  router.post('/v1/totp/enrol/confirm', totpConfirm(deps));
  router.get('/v1/account/sign-in-methods', signInMethods(deps));
  router.get('/v1/session', getSession(deps));
  router.post('/v1/session/end', endSession(deps));
  router.post('/v1/session/end-all', endAllSessions(deps));
  app.use(singleExit(deps.log));
  app.use(consoleCors(deps.origins.console));
  app.use(servePages({ '/sign-in': 'sign-in.html' }, deps.origins));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
