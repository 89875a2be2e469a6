/**
 * The API listener. The chat path is the named pipeline of docs/architecture.md, in admission order:
 *
 *   readBody -> validate -> lookAhead -> identify -> jobKey -> attach -> scan -> admit -> meter -> guard -> run -> wait -> respond
 *
 * (shape and limits first — a body that cannot be read cannot be admitted — then the principal; an
 * identical request re-attaches to its live job there, and `afterAttach` sends it past admission and
 * payment straight to wait -> respond; then model and route, team requirements, quota, guardrails; then
 * the job runs and the call waits for it). The job API shares every stage up to `run`, and adds its
 * idempotency key: checked before admission (a key bound to another body is 409) and bound only once the
 * request is admitted or re-attached, so a refused request binds nothing. Every error leaves through
 * singleExit. Each stage is timed where the pipeline is composed here (src/http/stage-timing.ts).
 */
import type Koa from 'koa';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { hostApp, type Front } from './host-app.js';
import { singleExit } from './single-exit.js';
import { openCall } from './call-context.js';
import { onFirstUse } from './on-first-use.js';
import { knowledgeContext, knowledgeSearch, openCors } from '../routes/knowledge.js';
import { sharedKnowledge } from '../knowledge/index.js';
import { listSecurityServices } from '../discovery/services.js';
import { wiresNotOffered } from '../routes/wires.js';
import { listModels } from '../routes/models.js';
import { bindIdempotencyKey, checkIdempotencyKey, getJob, queued, requireIdempotencyKey } from '../routes/jobs.js';
import { readBody } from '../stages/read-body.js';
import { validate } from '../stages/validate.js';
import { identify } from '../stages/identify.js';
import { scan } from '../stages/scan.js';
import { admit } from '../stages/admit.js';
import { meter } from '../stages/meter.js';
import { guard } from '../stages/guard.js';
import { attach, jobKey, run, wait } from '../stages/job.js';
import { lookAhead } from '../stages/look-ahead.js';
import { respond } from '../stages/respond.js';
import { billingCatalog, billingCheckout, billingPortal, billingStatus } from '../routes/billing.js';
import { logCheckpoint, logConsistency, logTile, ownReceipt } from '../routes/receipts.js';
import { researchRoutes, type WhoCalls } from '../routes/research.js';
import { stripeWebhook } from '../routes/stripe-webhook.js';
import { PAT_OR_SESSION, SESSION_ONLY, resolveCaller } from '../auth/caller.js';
import { verificationRefusal } from '../billing/verification.js';
import { secure } from '../routes/secure.js';
import { historyList, historyVersion } from '../decisions/history-routes.js';
import { serveOpenApi } from '../openapi/route.js';
import { APPLICATION_LIMIT, hitSubject, limitAddress, limitPrincipal, principalHit } from '../ratelimit/middleware.js';
import { timedPipeline } from '../http/stage-timing.js';
import type { Call } from '../call/call.js';
import { endAllSessions, endSession, getSession } from '../routes/session.js';
import { issueAccountToken, listAccountApplications, listAccountTokens, revokeAccountToken } from '../routes/account.js';
import { ownReceipts, usageSummary } from '../routes/usage.js';
import { consoleCors } from '../pages/console-cors.js';

const CHAT_PATH = '/v1/chat/completions';

/**
 * The chat route, which nearly every call takes, dispatched before the router with the same stages: the
 * router tests every route's pattern and builds and composes the matched route's chain again on every
 * request (about 2 % of a small call's profile). It sets what the router sets that anything here reads
 * (`routerPath`, the route the log line and the single exit name). Whatever else arrives (another method,
 * a trailing slash, other letter case) goes on to the router as before, which routes it as it always did.
 */
function chatFirst(chat: (ctx: Koa.Context, next: Koa.Next) => Promise<void>): Koa.Middleware {
  // The chain's end: the router would go on to allowedMethods, which does nothing for a route it matched.
  const end = () => Promise.resolve();
  return function chatFirst(ctx, next) {
    if (ctx.method !== 'POST' || ctx.path !== CHAT_PATH) return next();
    (ctx as Koa.Context & { routerPath?: string }).routerPath = CHAT_PATH;
    return chat(ctx, end);
  };
}

export function createApiApp(deps: Deps, front: Front): Koa {
  const { store, holder, log, jobs, engine } = deps;
  const app = hostApp(front);
  const router = new Router();
  const bodyLimit = () => holder.current.gateway.limits.bodyBytes;
  const refine = (p: Parameters<typeof verificationRefusal>[2], code: string | null, runtime: Parameters<typeof verificationRefusal>[1]) =>
    verificationRefusal(deps.billing, runtime, p, code);
  /** Admission proper: the stages a new job passes and a re-attached request skips. */
  const admission = (origin: 'chat' | 'api') => [
    scan(log),
    admit(deps.meter, refine, deps.decisions),
    meter(deps.meter, log, { engine, origin }),
    guard(log, deps.reviews),
  ];
  const caller = { store, sessions: deps.sessions, tokenUsage: deps.tokenUsage, now: deps.now };
  const runner = { meter: deps.meter, log };

  // Rate limits (src/ratelimit): the principal's hit rides with its token lookup, as the job lookup does.
  const limits = deps.limiter;
  const ahead = lookAhead(jobs, principalHit(limits, holder));
  /** After attach: a call attached to an identical request's live job goes on through `attached`, any other through `admitted`. */
  const afterAttach = (attached: Koa.Middleware[], admitted: Koa.Middleware[]): Koa.Middleware => {
    const whenAttached = timedPipeline(...attached);
    const otherwise = timedPipeline(...admitted);
    return (ctx, next) => ((ctx.state.call as Call).state.at === 'attached' ? whenAttached : otherwise)(ctx, next);
  };

  router.get('/v1/models', limitAddress(limits, holder), listModels(holder));
  router.get('/v1/secure', secure(holder, deps.receipts, deps.history));
  // Every version kept, with content: what any receipt or decision record names (src/decisions).
  router.get('/v1/secure/history', historyList(holder, deps.history));
  router.get('/v1/secure/history/:document/:ref', historyVersion(holder, deps.history, deps.decisions.store));
  // The OpenAPI document of this host, built from the schemas the routes below validate with (src/openapi).
  router.get(
    '/openapi.json',
    serveOpenApi(() => app),
  );
  router.get('/v1/security/services', listSecurityServices(holder));
  // Imported on first use: the document names the MCP SDK's protocol versions, and the SDK is not loaded at start.
  router.get(
    '/v1/control-plane',
    onFirstUse(async () => {
      const { controlPlane } = await import('../discovery/profile.js');
      return (ctx) => {
        ctx.body = controlPlane(deps, sharedKnowledge());
      };
    }),
  );

  // Public knowledge, CORS open. The evidence and its index (about 40 MiB of heap, 80 MiB of RSS) are loaded
  // on the first request that needs them, once per process, not at start: most gateways never search.
  for (const [path, handler] of [
    ['/v1/knowledge/search', knowledgeSearch(sharedKnowledge)],
    ['/v1/knowledge/context', knowledgeContext(sharedKnowledge)],
  ] as const) {
    router.get(path, openCors(), limitAddress(limits, holder), handler);
    router.options(path, openCors());
  }

  const chat = timedPipeline(
    openCall(holder),
    readBody(bodyLimit),
    validate('chat'),
    ahead,
    identify(caller),
    limitPrincipal(limits, holder),
    jobKey(),
    attach(jobs),
    afterAttach([wait(engine), respond()], [...admission('chat'), run(runner, engine), wait(engine), respond()]),
  );
  router.post(CHAT_PATH, chat);

  router.post(
    '/v1/research/jobs',
    timedPipeline(
      openCall(holder),
      requireIdempotencyKey(),
      readBody(bodyLimit),
      validate('job'),
      ahead,
      identify(caller),
      limitPrincipal(limits, holder),
      jobKey(),
      checkIdempotencyKey(jobs),
      attach(jobs),
      afterAttach([bindIdempotencyKey(jobs), queued()], [...admission('api'), bindIdempotencyKey(jobs), run(runner, engine), queued()]),
    ),
  );
  router.get('/v1/research/job', getJob(deps, jobs, holder));
  router.get('/v1/billing/status', billingStatus(deps, deps.meter));
  // The log's own routes first: `log` is never a receipt id (those start rcpt_).
  router.get('/v1/receipts/log/checkpoint', logCheckpoint(deps.receipts));
  router.get('/v1/receipts/log/consistency', logConsistency(deps.receipts));
  router.get('/v1/receipts/log/tile/{*rest}', logTile(deps.receipts));
  router.get('/v1/receipts/:id', ownReceipt(deps));

  // The browser session (cookie routes; auth/caller.ts has the rules).
  router.get('/v1/session', getSession(deps));
  router.post('/v1/session/end', endSession(deps));
  router.post('/v1/session/end-all', endAllSessions(deps));
  router.post('/v1/account/api-token', issueAccountToken(deps));
  router.get('/v1/account/api-tokens', listAccountTokens(deps));
  router.post('/v1/account/api-token/revoke', revokeAccountToken(deps));
  router.get('/v1/account/applications', listAccountApplications(deps));

  // Research status, verification and applications: `pat / cookie`. Buying is a person's act: cookie only.
  const patOrCookie: WhoCalls = (ctx) => resolveCaller(ctx, deps, PAT_OR_SESSION);
  const cookieOnly: WhoCalls = (ctx) => resolveCaller(ctx, deps, SESSION_ONLY);
  // What one account can file: applications per account per day (an atomic count in the store).
  const research = researchRoutes(deps, patOrCookie, (principalId, ctx) => hitSubject(ctx, limits, holder, APPLICATION_LIMIT, principalId));
  router.get('/v1/research/status', research.status);
  router.post('/v1/research/ekyc/start', research.ekycStart);
  router.get('/v1/research/ekyc/status', research.ekycStatus);
  router.post('/v1/research/applications', research.apply);
  router.get('/v1/billing/catalog', billingCatalog(holder, deps.stripe !== null));
  router.post('/v1/billing/checkout', billingCheckout(deps, cookieOnly));
  router.post('/v1/billing/portal', billingPortal(deps, cookieOnly));
  router.post('/v1/webhooks/stripe', stripeWebhook(deps));

  // The principal's own record of its calls (the console's receipts and usage chart): `pat / cookie`.
  router.get('/v1/receipts', ownReceipts(store, deps.meter, patOrCookie));
  router.get('/v1/usage', usageSummary(store, deps.meter, patOrCookie));

  app.use(singleExit(log));
  app.use(consoleCors(deps.origins.console));
  app.use(wiresNotOffered());
  app.use(chatFirst(chat));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
