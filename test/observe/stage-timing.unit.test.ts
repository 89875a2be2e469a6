/**
 * Stage timing (src/http/stage-timing.ts) through a real koa-compose pipeline: every named stage a call
 * enters is observed exactly once — one that hands on at once, one that awaits before handing on, one that
 * answers without handing on, one that throws (synchronously or after awaiting) — and a stage the call never
 * reaches is not observed at all. A stage's time runs until it hands on: a stage that hands on at once is
 * never charged with the time of the stages after it.
 */
import { expect } from 'chai';
import compose from 'koa-compose';
import type Koa from 'koa';
import { timedStages } from '../../src/http/stage-timing.js';
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
    await compose(timedStages(t_sync, t_async, t_answer, t_never))(c1);
    expect(c1.body).to.equal('answered');
    expect(await rejection(compose(timedStages(t_sync, t_throw, t_never))(ctx()))).to.equal('refused');
    expect(await rejection(compose(timedStages(t_async, t_reject, t_never))(ctx()))).to.equal('refused later');
    // A stage that hands on at once, to one that waits: the wait is the second's, never the first's.
    const sumsBefore = await stageSums();
    const slow = compose(timedStages(t_sync, t_slow))(ctx());
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
});
