/**
 * Per-stage latency (`portcullis_stage_duration_seconds{stage}`, and a span per stage when tracing is on)
 * without touching the stages: where a pipeline is composed (src/app/api.ts), `timedStages` wraps each of
 * its named stages once, at start, to time its own work — from entering it to its handing on to the next
 * stage, or to its return when it does not hand on. Anonymous middleware is left as it is.
 *
 * The wrapper runs on every stage of every call (inclusive 24 % of a small call's profile), so it costs as
 * little as it can: not an `async` layer of its own (it hands back the stage's own promise when the stage
 * handed on, and chains one `then` only for a stage that has not), the histogram's child bound once per
 * stage at start and counting in typed arrays (src/observe/folded-histogram.ts: no label set validated or
 * hashed per observation), no timer closure, and no span when tracing is off.
 */
import type Koa from 'koa';
import { metrics } from '../observe/metrics.js';
import { stageSpan, tracingOn } from '../observe/tracing.js';

type Middleware = Koa.Middleware;
const TIMED = Symbol('timed');

/** One stage's timing in one call: open from entering the stage until it hands on or returns. */
class StageClock {
  readonly #started = performance.now();
  readonly #histogram: { observe(seconds: number): void };
  readonly #span: (() => void) | null;
  #open = true;

  constructor(stage: string, histogram: { observe(seconds: number): void }) {
    this.#histogram = histogram;
    this.#span = tracingOn() ? stageSpan(stage) : null;
  }

  end(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#histogram.observe((performance.now() - this.#started) / 1000);
    this.#span?.();
  }

  get open(): boolean {
    return this.#open;
  }
}

function timed(fn: Middleware): Middleware {
  if (!fn.name || (fn as unknown as Record<symbol, boolean>)[TIMED]) return fn;
  const stage = fn.name.replace(/^bound /, '');
  const histogram = metrics.stageSeconds.child(stage, { stage });
  const wrapped: Middleware = (ctx, next) => {
    const clock = new StageClock(stage, histogram);
    let result: unknown;
    try {
      result = fn(ctx, () => {
        clock.end();
        return next();
      });
    } catch (err) {
      clock.end();
      throw err;
    }
    // Handed on already (the usual case by the time a stage awaits what follows it): nothing left to time
    // at its return, so its own promise goes back as it is.
    if (!clock.open) return result;
    return Promise.resolve(result).then(
      (v) => {
        clock.end();
        return v;
      },
      (err: unknown) => {
        clock.end();
        throw err;
      },
    );
  };
  Object.defineProperty(wrapped, 'name', { value: fn.name });
  (wrapped as unknown as Record<symbol, boolean>)[TIMED] = true;
  return wrapped;
}

/** The stages of a pipeline, each named one timed. */
export function timedStages(...stages: Middleware[]): Middleware[] {
  return stages.map(timed);
}
