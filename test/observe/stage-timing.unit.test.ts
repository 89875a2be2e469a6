/**
 * Stage timing (src/http/stage-timing.ts) through the pipeline that composes and times: every named stage a call
 * enters is observed exactly once — one that hands on at once, one that awaits before handing on, one that
 * answers without handing on, one that throws (synchronously or after awaiting) — and a stage the call never
 * reaches is not observed at all. A stage's time runs until it hands on: a stage that hands on at once is
 * never charged with the time of the stages after it.
 */
import { expect } from 'chai';
import compose from 'koa-compose';
import type Koa from 'koa';
import { timedPipeline } from '../../src/http/stage-timing.js';
import { registry } from '../../src/observe/metrics.js';

async function stageCounts(): Promise<Record<string, number>> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === 'portcullis_stage_duration_seconds')!;
  const out: Record<string, number> = {};
  for (const v of m.values as Array<{ metricName?: string; value: number; labels: Record<string, string> }>) {
    if (v.metricName === 'portcullis_stage_duration_seconds_count') out[v.labels['stage']!] = v.value;
  }
  return out;
}

async function stageSums(): Promise<Record<string, number>> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === 'portcullis_stage_duration_seconds')!;
  const out: Record<string, number> = {};
  for (const v of m.values as Array<{ metricName?: string; value: number; labels: Record<string, string> }>) {
    if (v.metricName === 'portcullis_stage_duration_seconds_sum') out[v.labels['stage']!] = v.value;
  }
  return out;
}

const ctx = () => ({ state: {} }) as unknown as Koa.Context;
const tick = () => new Promise<void>((r) => setImmediate(r));
async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  return 'resolved';
}

describe('stage timing observes each stage a call enters exactly once', () => {
  it('for stages that hand on at once, after awaiting, answer without handing on, or throw', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const t_sync = function t_sync(_c: Koa.Context, next: Koa.Next) {
      return next();
    };
    const t_async = async function t_async(_c: Koa.Context, next: Koa.Next) {
      await tick();
      await next();
    };
    const t_answer = async function t_answer(c: Koa.Context) {
      c.body = 'answered';
    };
    const t_never = async function t_never(_c: Koa.Context, next: Koa.Next) {
      await next();
    };
    const t_slow = async function t_slow(_c: Koa.Context, next: Koa.Next) {
      await gate;
      await next();
    };
    const t_throw = function t_throw(): Promise<void> {
      throw new Error('refused');
    };
    const t_reject = async function t_reject(): Promise<void> {
      await tick();
      throw new Error('refused later');
    };
    const before = await stageCounts();
    const c1 = ctx();
    await timedPipeline(t_sync, t_async, t_answer, t_never)(c1);
    expect(c1.body).to.equal('answered');
    expect(await rejection(timedPipeline(t_sync, t_throw, t_never)(ctx()))).to.equal('refused');
    expect(await rejection(timedPipeline(t_async, t_reject, t_never)(ctx()))).to.equal('refused later');
    // A stage that hands on at once, to one that waits: the wait is the second's, never the first's.
    const sumsBefore = await stageSums();
    const slow = timedPipeline(t_sync, t_slow)(ctx());
    await new Promise((r) => setTimeout(r, 50)); // t_slow waits here; t_sync handed on long before
    release();
    await slow;
    const after = await stageCounts();
    const sums = await stageSums();
    const grew = (s: string) => (after[s] ?? 0) - (before[s] ?? 0);
    expect({
      t_sync: grew('t_sync'),
      t_async: grew('t_async'),
      t_answer: grew('t_answer'),
      t_throw: grew('t_throw'),
      t_reject: grew('t_reject'),
      t_slow: grew('t_slow'),
    }).to.deep.equal({
      t_sync: 3,
      t_async: 2,
      t_answer: 1,
      t_throw: 1,
      t_reject: 1,
      t_slow: 1,
    });
    expect(grew('t_never')).to.equal(0);
    const slowTime = sums['t_slow']! - (sumsBefore['t_slow'] ?? 0);
    const syncTime = sums['t_sync']! - (sumsBefore['t_sync'] ?? 0);
    expect(slowTime).to.be.greaterThan(syncTime);
  });

  it('runs as koa-compose runs: in order, on to the next middleware at the end, and refuses a second next()', async () => {
    const order: string[] = [];
    const t_first = function t_first(_c: Koa.Context, next: Koa.Next) {
      order.push('first');
      return next();
    };
    const anonymous = async (_c: Koa.Context, next: Koa.Next) => {
      order.push('anonymous');
      await next();
      order.push('anonymous after');
    };
    const t_twice = async function t_twice(_c: Koa.Context, next: Koa.Next) {
      await next();
      await next();
    };
    await timedPipeline(t_first, anonymous)(ctx(), async () => {
      order.push('after the pipeline');
    });
    expect(order).to.deep.equal(['first', 'anonymous', 'after the pipeline', 'anonymous after']);
    expect(await rejection(timedPipeline(t_twice)(ctx()))).to.equal('next() called multiple times');
    // Nested, as the chat route nests the stages after attach: the inner pipeline's end hands on to the outer's
    // next middleware, and the inner pipeline is not a stage of its own.
    const before = await stageCounts();
    const c2 = ctx();
    await timedPipeline(timedPipeline(t_first), function t_after(c: Koa.Context) {
      c.body = 'done';
    })(c2);
    expect(c2.body).to.equal('done');
    const after = await stageCounts();
    expect([(after['t_first'] ?? 0) - (before['t_first'] ?? 0), (after['t_after'] ?? 0) - (before['t_after'] ?? 0), after['']]).to.deep.equal([
      1,
      1,
      undefined,
    ]);
  });

  it('settles as koa-compose settles, stage for stage, whatever the stages do', async () => {
    // The same stages through both: what each call sees in order, and how the whole settles.
    const script = (log: string[]) => [
      function t_a(_c: Koa.Context, next: Koa.Next) {
        log.push('a');
        return next().then(() => log.push('a after'));
      },
      async function t_b(_c: Koa.Context, next: Koa.Next) {
        log.push('b');
        await tick();
        try {
          await next();
        } catch (err) {
          log.push(`b caught ${(err as Error).message}`);
          throw new Error('from b', { cause: err });
        }
      },
      (_c: Koa.Context, next: Koa.Next) => {
        log.push('anonymous');
        return next();
      },
      function t_c(_c: Koa.Context, next: Koa.Next) {
        log.push('c');
        next().catch((err: Error) => log.push(`c saw ${err.message}`));
        return next(); // a second next(): refused
      },
      function t_d() {
        log.push('d');
        throw new Error('from d');
      },
    ];
    const outcome = async (run: (c: Koa.Context) => Promise<unknown>, log: string[]) => [await rejection(run(ctx())), ...log];
    const viaCompose: string[] = [];
    const viaPipeline: string[] = [];
    const composed = await outcome((c) => compose(script(viaCompose))(c), viaCompose);
    const piped = await outcome((c) => timedPipeline(...script(viaPipeline))(c), viaPipeline);
    expect(piped).to.deep.equal(composed);
    expect(composed[0]).to.equal('from b');
  });
});
