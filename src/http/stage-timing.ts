/**
 * Per-stage latency (`portcullis_stage_duration_seconds{stage}`, and a span per stage when tracing is on)
 * without touching the stages: every named
 * middleware on a router of the app (the pipeline stages are named functions, architecture habit 1) is
 * wrapped once, at start, to time its own work — from entering it to its handing on to the next stage, or
 * to its return when it does not hand on. Anonymous handlers (plain routes) are left alone.
 */
import type Koa from 'koa';
import { metrics } from '../observe/metrics.js';
import { stageSpan } from '../observe/tracing.js';

type Middleware = Koa.Middleware;
const TIMED = Symbol('timed');

function timed(fn: Middleware): Middleware {
  if (!fn.name || (fn as unknown as Record<symbol, boolean>)[TIMED]) return fn;
  const stage = fn.name.replace(/^bound /, '');
  const wrapped: Middleware = async (ctx, next) => {
    const timer = metrics.stageSeconds.startTimer({ stage });
    const span = stageSpan(stage);
    const end = () => {
      timer();
      span();
    };
    let handed = false;
    try {
      await fn(ctx, () => {
        handed = true;
        end();
        return next();
      });
    } finally {
      if (!handed) end();
    }
  };
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  (wrapped as unknown as Record<symbol, boolean>)[TIMED] = true;
  return wrapped;
}

/** Wraps the named middleware of every router mounted on `app` (found by @koa/router's `dispatch.router`). */
export function timeStages(app: Koa): void {
  for (const mw of app.middleware) {
    const router = (mw as unknown as { router?: { stack: Array<{ stack: Middleware[] }> } }).router;
    if (!router) continue;
    for (const layer of router.stack) layer.stack = layer.stack.map(timed);
  }
}
