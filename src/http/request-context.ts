/**
 * The outermost middleware of every listener: it gives each request an id (the caller's `x-request-id` when
 * it is a short token, otherwise a fresh UUID), returns it in the `x-request-id` header, counts the request
 * in flight (for draining), and when the answer is finished writes one info line — method, route pattern,
 * status, duration, request id, listener, and a hash of the principal — and the request metrics. Never the
 * path's ids, a header, the body or a token: the route pattern (`/v1/receipts/:id`) stands for the path.
 */
import type { Context, Next } from 'koa';
import type { RouterContext } from '@koa/router';
import { createHash, randomUUID } from 'node:crypto';
import { boundedMemo } from '../bounded-memo.js';
import type { Logger } from '../log.js';
import type { Lifecycle } from './lifecycle.js';
import { metrics } from '../observe/metrics.js';
import { serverSpan, tracingOn } from '../observe/tracing.js';
import { SpanStatusCode, type Span } from '@opentelemetry/api';
import type { ServerResponse } from 'node:http';

const GIVEN_ID = /^[A-Za-z0-9._:-]{8,128}$/;
/** Calls that pass admission: their decision is counted as "admitted" or their refusal's code. */
const ADMITTING = new Set(['/v1/chat/completions', '/v1/research/jobs']);
const PROBES = new Set(['/healthz', '/readyz', '/metrics']);

/** Recent principals' log hashes: a principal calls again and again, and the hash of an id never changes. */
export const principalHash = boundedMemo(10_000, (id) => createHash('sha256').update(id).digest('hex').slice(0, 16));

interface CallLike {
  identity?: { principal?: { id?: string } };
  decision?: { guardrails?: { block?: string[]; redact?: string[]; flag?: string[] } };
}

/** One request's line and metrics, written once when its answer is finished or its connection closes. */
class RequestRecord {
  readonly ctx: Context;
  readonly listener: string;
  readonly log: Logger;
  readonly lifecycle: Lifecycle;
  readonly started: number;
  readonly requestId: string;
  /** The server span, when tracing is on (src/observe/tracing.ts); null otherwise. */
  span: Span | null = null;
  done = false;

  constructor(ctx: Context, listener: string, log: Logger, lifecycle: Lifecycle, started: number, requestId: string) {
    this.ctx = ctx;
    this.listener = listener;
    this.log = log;
    this.lifecycle = lifecycle;
    this.started = started;
    this.requestId = requestId;
  }

  finish(): void {
    if (this.done) return;
    this.done = true;
    const { ctx, listener, requestId } = this;
    this.lifecycle.leave();
    // Never the raw path as a label: any client could mint series with it.
    const route = (ctx.state.route as string | undefined) ?? (ctx as Partial<RouterContext>).routerPath ?? 'unmatched';
    const status = ctx.res.writableFinished ? ctx.status : 499; // 499: the client went away first
    const body = ctx.body as { error?: { code?: string } } | undefined;
    const code = body && typeof body === 'object' && 'error' in body ? (body.error?.code ?? '') : '';
    const seconds = (performance.now() - this.started) / 1000;
    metrics.requests.child(`${listener} ${route} ${status} ${code}`, { host: listener, route, status: String(status), code }).inc();
    metrics.requestSeconds.child(`${listener} ${route}`, { host: listener, route }).observe(seconds);
    if (code === 'store-unavailable') metrics.storeErrors.inc();
    const call = ctx.state.call as CallLike | undefined;
    if (ADMITTING.has(route) && ctx.method === 'POST') {
      const decision = code || (status < 400 ? 'admitted' : String(status));
      metrics.admission.child(decision, { decision }).inc();
    }
    const g = call?.decision?.guardrails;
    if (g) for (const action of ['block', 'redact', 'flag'] as const) for (const rule of g[action] ?? []) metrics.guardrail.inc({ rule, action });
    const principalId = call?.identity?.principal?.id;
    const span = this.span;
    if (span) {
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({
        'http.request.method': ctx.method,
        'http.route': route,
        'http.response.status_code': status,
        'portcullis.listener': listener,
        'portcullis.request_id': requestId,
        ...(code ? { 'error.type': code } : {}),
      });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: code || String(status) });
      span.end();
    }
    // Probes come every few seconds from every balancer: their lines are debug, every other request's info.
    this.log[PROBES.has(route) ? 'debug' : 'info']('http.request', {
      listener,
      method: ctx.method,
      route,
      status,
      ...(code ? { code } : {}),
      durationMs: Math.round(seconds * 1000 * 10) / 10,
      requestId,
      ...(principalId ? { principal: principalHash(principalId) } : {}),
    });
  }
}

const RECORD = Symbol('request record');

/** The response's 'finish' and 'close' listener, one function for every request (no closure per request). */
function finished(this: ServerResponse): void {
  (this as ServerResponse & { [RECORD]?: RequestRecord })[RECORD]?.finish();
}

export function requestContext(listener: string, log: Logger, lifecycle: Lifecycle) {
  return function requestContext(ctx: Context, next: Next): Promise<void> {
    // The server span of the request, only when tracing is on (src/observe/tracing.ts).
    if (tracingOn()) return serverSpan(ctx.headers, ctx.method, (span) => handle(ctx, next, listener, log, lifecycle, span));
    return handle(ctx, next, listener, log, lifecycle, null);
  };
}

async function handle(ctx: Context, next: Next, listener: string, log: Logger, lifecycle: Lifecycle, span: Span | null): Promise<void> {
  const started = performance.now();
  const given = ctx.get('x-request-id');
  const requestId = GIVEN_ID.test(given) ? given : randomUUID();
  ctx.state.requestId = requestId;
  ctx.set('x-request-id', requestId);
  lifecycle.enter();
  const record = new RequestRecord(ctx, listener, log, lifecycle, started, requestId);
  record.span = span;
  const res = ctx.res as ServerResponse & { [RECORD]?: RequestRecord };
  res[RECORD] = record;
  // `on`, not `once`: the record writes once whichever comes first, and `once` wraps each listener anew.
  res.on('finish', finished);
  res.on('close', finished);
  await next();
  // Draining: tell the client not to send again on this connection (it reconnects, to another instance).
  if (lifecycle.draining && !ctx.headerSent) ctx.set('connection', 'close');
}
