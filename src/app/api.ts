/**
 * The API listener. The chat path is the named pipeline of architecture.md, in admission order:
 *
 *   readBody -> validate -> identify -> jobKey -> attach -> scan -> admit -> meter -> guard -> run -> wait -> respond
 *
 * (shape and limits first — a body that cannot be read cannot be admitted — then the principal; an
 * identical request re-attaches to its live job there, skipping admission and payment; then model and
 * route, team requirements, quota, guardrails; then the job runs and the call waits for it). The job API
 * shares every stage up to `run`. Every error leaves through singleExit.
 */
import Koa from 'koa';
import compose from 'koa-compose';
import { Router } from '@koa/router';
import type { Deps } from './deps.js';
import { singleExit } from './single-exit.js';
import { openCall } from './call-context.js';
import { wiresNotOffered } from '../routes/wires.js';
import { listModels } from '../routes/models.js';
import { bindIdempotencyKey, getJob, queued, requireIdempotencyKey } from '../routes/jobs.js';
import { readBody } from '../stages/read-body.js';
import { validate } from '../stages/validate.js';
import { identify } from '../stages/identify.js';
import { scan } from '../stages/scan.js';
import { admit } from '../stages/admit.js';
import { meter } from '../stages/meter.js';
import { guard } from '../stages/guard.js';
import { attach, jobKey, lookAhead, run, wait } from '../stages/job.js';
import { respond } from '../stages/respond.js';
import { billingStatus, ownReceipt } from '../routes/billing.js';
import { secure } from '../routes/secure.js';
import { serveOpenApi } from '../openapi/route.js';
import { limitAddress, limitPrincipal, principalLimitAhead } from '../ratelimit/middleware.js';

export function createApiApp(deps: Deps): Koa {
  const { store, holder, log, jobs, engine } = deps;
  const app = new Koa({ proxy: false });
  const router = new Router();
  const bodyLimit = () => holder.current.gateway.limits.bodyBytes;
  /** Admission proper: the stages a new job passes and a re-attached request skips. */
  const admission = (origin: 'chat' | 'api') => [scan(log), admit(deps.meter), meter(store, deps.meter, log, { engine, origin }), guard(log, deps.reviews)];

  // Rate limits (src/ratelimit): the principal's hit rides with its token lookup, as the job lookup does.
  const limits = deps.limiter;
  const ahead = [lookAhead(jobs), principalLimitAhead(limits, holder)];
  const alongside = (call: Parameters<(typeof ahead)[number]>[0], principalId: string) => ahead.forEach((f) => f(call, principalId));

  router.get('/v1/models', limitAddress(limits, holder), listModels(holder));
  router.get('/v1/secure', secure(holder, deps.meter, deps.history));
  // The OpenAPI document of this host, built from the schemas the routes below validate with (src/openapi).
  router.get('/openapi.json', serveOpenApi(() => app));

  const answer = compose([wait(engine), respond()]) as Koa.Middleware;
  router.post(
    '/v1/chat/completions',
    openCall(holder),
    readBody(bodyLimit),
    validate('chat'),
    identify(store, alongside),
    limitPrincipal(limits, holder),
    jobKey(),
    attach(jobs, answer),
    ...admission('chat'),
    run(deps, engine, 'chat'),
    answer,
  );

  router.post(
    '/v1/research/jobs',
    openCall(holder),
    requireIdempotencyKey(),
    readBody(bodyLimit),
    validate('job'),
    identify(store, alongside),
    limitPrincipal(limits, holder),
    jobKey(),
    bindIdempotencyKey(jobs),
    attach(jobs, queued()),
    ...admission('api'),
    run(deps, engine, 'api'),
    queued(),
  );
  router.get('/v1/research/job', getJob(store, jobs, holder));
  router.get('/v1/billing/status', billingStatus(store, deps.meter));
  router.get('/v1/receipts/:id', ownReceipt(store));

  app.use(singleExit(log));
  app.use(wiresNotOffered());
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
