/**
 * Per-stage latency (`portcullis_stage_duration_seconds{stage}`, and a span per stage when tracing is on)
 * without touching the stages: where a pipeline is composed (src/app/api.ts), `timedPipeline` composes its
 * stages and times each named one — from entering it to its handing on to the next stage, or to its return
 * when it does not hand on. Anonymous middleware runs untimed.
 *
 * It runs on every stage of every call, so it costs as little as it can: no `async` layer of its own (a
 * stage's own promise goes back as it is when the stage handed on, and one `then` is chained only for a
 * stage that has not), the histogram's child bound once per stage at start and counting in typed arrays
 * (src/observe/folded-histogram.ts: no label set validated or hashed per observation), and no span when
 * tracing is off.
 */
import type Koa from 'koa';
import { metrics } from '../observe/metrics.js';
import { stageSpan, tracingOn } from '../observe/tracing.js';

type Middleware = Koa.Middleware;

/** What a stage threw, as the pipeline's rejection: as it was thrown, whatever it is, as koa-compose passes it on. */
function rejected(err: unknown): Promise<never> {
  // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the stage's own error, unchanged
  return Promise.reject(err);
}

/**
 * A pipeline composed and timed in one: koa-compose's order and its "next() called multiple times" refusal,
 * each named stage timed as above. It replaces koa-compose over stages each wrapped in a timer, which made per
 * stage and call a bound `next`, a clock object and a closure around the `next`; here one object per call
 * holds the pipeline's place and the one clock that can be running (a stage's clock stops when it hands on,
 * before the next stage starts, so only the stage entered last can still be running), and each stage gets one
 * `next`. The chat route runs its stages on every call (src/app/api.ts).
 */
export function timedPipeline(...stages: Middleware[]): (ctx: Koa.Context, next?: Koa.Next) => Promise<void> {
  const steps: Step[] = stages.map((fn) => {
    const name = fn.name.replace(/^bound /, '');
    return { fn, stage: name, histogram: name ? metrics.stageSeconds.child(name, { stage: name }) : null };
  });
  // Anonymous, as koa-compose's is: a pipeline inside another is not timed as a stage of its own.
  return (ctx: Koa.Context, next?: Koa.Next): Promise<void> => new PipelineRun(steps, ctx, next).dispatch(0);
}

interface Step {
  readonly fn: Middleware;
  /** '' for anonymous middleware, which is not timed. */
  readonly stage: string;
  readonly histogram: { observe(seconds: number): void } | null;
}

/** One call's way through a timed pipeline. */
class PipelineRun {
  readonly #steps: readonly Step[];
  readonly #ctx: Koa.Context;
  readonly #next: Koa.Next | undefined;
  #index = -1;
  /** The stage whose clock runs (-1: none), since when, and its span's end when tracing is on. */
  #open = -1;
  #started = 0;
  #span: (() => void) | null = null;

  constructor(steps: readonly Step[], ctx: Koa.Context, next: Koa.Next | undefined) {
    this.#steps = steps;
    this.#ctx = ctx;
    this.#next = next;
  }

  /** Runs stage `i`; `at`, when the stage before it just handed on, is the clock reading that ended it. */
  dispatch(i: number, at = -1): Promise<void> {
    if (i <= this.#index) return Promise.reject(new Error('next() called multiple times'));
    this.#index = i;
    const steps = this.#steps;
    if (i === steps.length) {
      const last = this.#next;
      if (!last) return Promise.resolve();
      try {
        return Promise.resolve(last()) as Promise<void>;
      } catch (err) {
        return rejected(err);
      }
    }
    const step = steps[i]!;
    if (step.histogram === null) {
      try {
        return Promise.resolve(step.fn(this.#ctx, () => this.dispatch(i + 1))) as Promise<void>;
      } catch (err) {
        return rejected(err);
      }
    }
    this.#open = i;
    // One clock reading for both sides of a hand-on: the previous stage's end is this one's start.
    this.#started = at >= 0 ? at : performance.now();
    this.#span = tracingOn() ? stageSpan(step.stage) : null;
    let result: unknown;
    try {
      result = step.fn(this.#ctx, () => this.dispatch(i + 1, this.#end(i)));
    } catch (err) {
      this.#end(i);
      return rejected(err);
    }
    // Handed on already (the usual case by the time a stage awaits what follows it): nothing left to time.
    if (this.#open !== i) return Promise.resolve(result) as Promise<void>;
    return Promise.resolve(result).then(
      (v) => {
        this.#end(i);
        return v;
      },
      (err: unknown) => {
        this.#end(i);
        throw err;
      },
    ) as Promise<void>;
  }

  /**
   * Stage `i`'s clock stops, once: at its handing on or at its settling, whichever comes first. Returns the
   * clock's reading, or -1 when it had stopped already.
   */
  #end(i: number): number {
    if (this.#open !== i) return -1;
    this.#open = -1;
    const now = performance.now();
    this.#steps[i]!.histogram!.observe((now - this.#started) / 1000);
    const span = this.#span;
    if (span !== null) {
      this.#span = null;
      span();
    }
    return now;
  }
}
