/**
 * The auth listener ({auth_url}): sign-in. Ceremonies (passkeys, SIWE, CACAO, TOTP, recovery) end by
 * starting a session; the routes are listed here in the order a person meets them.
 *
 * The host has no profile file and no health route: `/ready` and every `/.well-known/...` answer 404, as
 * the spec says, because nothing here is mounted on them.
 *
 * Every POST here is same-origin only (403 `cross-site-request`), with or without a cookie: a sign-in sets
 * the session cookie, and a cross-site page must not sign a visitor in to an account of its choosing
 * (login CSRF). Clients outside a browser send the auth origin as `Origin`, as `portcullis passkey` does.
 */
import { CHALLENGE_LIMIT, limitPerAddress } from '../ratelimit/middleware.js';
import type Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { hostApp, type Front } from './host-app.js';
import { singleExit } from './single-exit.js';
import { servePages } from '../pages/serve.js';
import { consoleCors } from '../pages/console-cors.js';
import { signInMethods } from '../routes/sign-in-methods.js';
import { walletRoutes } from '../routes/wallet.js';
import { endAllSessions, endSession, getSession } from '../routes/session.js';
import { loginOptions, loginVerify, registerOptions, registerVerify } from '../routes/passkey.js';
import { totpConfirm, totpEnrol, totpVerify } from '../routes/totp.js';
import { recoveryCancel, recoveryChallenge, recoveryComplete, recoverySetup, recoveryStart, recoveryStatus } from '../routes/recovery.js';
import { linkHint } from '../routes/link-hint.js';
import { addWallet, removeMethod } from '../routes/account-methods.js';
import { identityProviderCallback, identityProviderStart } from '../routes/identity-provider.js';
import { putBackOnOutage } from '../challenges/ceremony.js';

export function createAuthApp(deps: Deps, front: Front): Koa {
  const app = hostApp(front);
  const router = new Router();

  // Every route that stores a challenge or nonce for a stranger is limited per address (IPv6: per /64).
  const challengeLimit = limitPerAddress(deps.limiter, deps.holder, CHALLENGE_LIMIT);
  router.post('/v1/passkey/register/options', challengeLimit, registerOptions(deps));
  router.post('/v1/passkey/register/verify', registerVerify(deps));
  router.post('/v1/passkey/login/options', challengeLimit, loginOptions(deps));
  router.post('/v1/passkey/login/verify', loginVerify(deps));

  // Wallet sign-ins: SIWE, DID/CACAO, and the passkey-owned smart account (src/wallet).
  const wallet = walletRoutes(deps);
  router.post('/v1/siwe/nonce', challengeLimit, wallet.siweNonce);
  router.post('/v1/siwe/options', challengeLimit, wallet.siweOptions);
  router.post('/v1/siwe/verify', wallet.siweVerify);
  router.post('/v1/cacao/session', wallet.cacaoSession);
  router.post('/v1/passkey/smart-account/options', challengeLimit, wallet.smartAccountOptions);
  router.post('/v1/passkey/smart-account/verify', wallet.smartAccountVerify);

  router.post('/v1/totp/verify', totpVerify(deps));
  router.post('/v1/totp/enrol', totpEnrol(deps));
  router.post('/v1/totp/enrol/confirm', totpConfirm(deps));
  router.get('/v1/account/sign-in-methods', signInMethods(deps));
  router.post('/v1/account/wallets/siwe', addWallet(deps, 'siwe'));
  router.post('/v1/account/wallets/cacao', addWallet(deps, 'cacao'));
  router.post('/v1/account/sign-in-methods/remove', removeMethod(deps));
  router.post('/v1/account/identity-provider/start', identityProviderStart(deps));
  router.get('/v1/account/identity-provider/callback', identityProviderCallback(deps));
  router.get('/v1/link/hint', linkHint(deps));
  router.post('/v1/recovery/setup', recoverySetup(deps));
  router.get('/v1/recovery', recoveryStatus(deps));
  router.post('/v1/recovery/challenge', challengeLimit, recoveryChallenge(deps));
  router.post('/v1/recovery/start', recoveryStart(deps));
  router.post('/v1/recovery/complete', recoveryComplete(deps));
  router.post('/v1/recovery/cancel', recoveryCancel(deps));
  router.get('/v1/session', getSession(deps));
  router.post('/v1/session/end', endSession(deps));
  router.post('/v1/session/end-all', endAllSessions(deps));
  app.use(singleExit(deps.log));
  app.use(putBackOnOutage(deps.challenges, deps.now));
  app.use(consoleCors(deps.origins.console));
  app.use(servePages({ '/sign-in': 'sign-in.html' }, deps.origins));
  app.use(async function sameOriginPosts(ctx, next) {
    deps.sessions.requireSameOrigin(ctx);
    await next();
  });
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
