/**
 * R3's added latency at half of its own maximum, the figure the p50 / p99 target names, from several rounds
 * rather than one window. One 3-second window at 700 calls a second holds about 2,100 answers: its p99 is
 * the 21 slowest, so a single stall of a few tens of milliseconds anywhere on the machine (the gateway, the
 * load generator, the mock, Redis, a neighbour's process) sets it, and two identical windows of the bare
 * forwarder R1, moments apart, differ by more than the 5 ms target on the shared machine (bench/README.md,
 * "2026-11-28, the tail"). So: `rounds` pairs of windows, R0 then R3 at the same rate, adjacent so that both
 * see the same machine; Redis' AOF rewritten before each pair (window-context.ts); each pair gives an added
 * p50, p90 and p99; the figure is the median over the pairs, and every pair is kept for the report.
 *
 * The latencies are timed from the request's write (`latency`, what the bench has always reported) and,
 * beside them, from the slot's scheduled time (`fromIntended`, load.ts: the open-loop figure, which also
 * counts a wait for a connection or for the load generator); both are kept per pair.
 */
import type { LoadResult } from './load.js';
import type { WindowContext } from './window-context.js';

export interface HalfLoadPair {
  r0: { p50: number; p90: number; p99: number; p99FromSlot: number; answers: number };
  r3: { p50: number; p90: number; p99: number; p99FromSlot: number; answers: number; overloaded: boolean };
  p50Added: number;
  p90Added: number;
  p99Added: number;
  /** p99(R3) - p99(R0), both timed from the scheduled slot. */
  p99AddedFromSlot: number;
}

export interface HalfLoad {
  targetRps: number;
  /** The pair whose p99 added is the median's (the lower middle one for an even count): its two windows whole. */
  R0: LoadResult;
  R3: LoadResult;
  /** Medians over the pairs. */
  p50Added: number;
  p90Added: number;
  p99Added: number;
  p99AddedFromSlot: number;
  pairs: HalfLoadPair[];
  /** R3's failed requests over all its windows. */
  r3Errors: number;
  /** What happened in the gateway and Redis during R3's windows, over all the pairs. */
  context?: WindowContext;
}

export function median(xs: number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

export async function halfLoadRounds(o: {
  rounds: number;
  targetRps: number;
  /** Before each pair (the AOF rewrite). */
  before: () => Promise<unknown>;
  r0: () => Promise<LoadResult>;
  r3: () => Promise<LoadResult>;
  /** Starts watching the gateway and Redis before the first pair; `end()` after the last. */
  watch?: () => Promise<{ end(): Promise<WindowContext> }>;
}): Promise<HalfLoad> {
  const runs: Array<{ a: LoadResult; b: LoadResult; pair: HalfLoadPair }> = [];
  const contexts: WindowContext[] = [];
  for (let i = 0; i < Math.max(1, o.rounds); i++) {
    await o.before();
    const a = await o.r0();
    // Watched over R3's window only: not over the AOF rewrite the bench itself started before the pair.
    const watching = o.watch ? await o.watch() : null;
    const b = await o.r3();
    if (watching) contexts.push(await watching.end());
    const slot = (r: LoadResult) => r.fromIntended?.p99 ?? Number.NaN;
    runs.push({
      a,
      b,
      pair: {
        r0: { p50: a.latency.p50, p90: a.latency.p90, p99: a.latency.p99, p99FromSlot: slot(a), answers: a.ok },
        r3: { p50: b.latency.p50, p90: b.latency.p90, p99: b.latency.p99, p99FromSlot: slot(b), answers: b.ok, overloaded: b.overloaded === true },
        p50Added: b.latency.p50 - a.latency.p50,
        p90Added: b.latency.p90 - a.latency.p90,
        p99Added: b.latency.p99 - a.latency.p99,
        p99AddedFromSlot: slot(b) - slot(a),
      },
    });
  }
  const context = contexts.length ? mergeContexts(contexts) : undefined;
  const byP99 = [...runs].sort((x, y) => x.pair.p99Added - y.pair.p99Added);
  const mid = byP99[Math.floor((byP99.length - 1) / 2)]!;
  const pairs = runs.map((r) => r.pair);
  return {
    targetRps: o.targetRps,
    R0: mid.a,
    R3: mid.b,
    p50Added: median(pairs.map((p) => p.p50Added)),
    p90Added: median(pairs.map((p) => p.p90Added)),
    p99Added: median(pairs.map((p) => p.p99Added)),
    p99AddedFromSlot: median(pairs.map((p) => p.p99AddedFromSlot)),
    pairs,
    r3Errors: runs.reduce((n, r) => n + r.b.errors, 0),
    ...(context ? { context } : {}),
  };
}

/** The windows' contexts as one: collections and forks summed, the largest loop delay, any rewrite. */
export function mergeContexts(cs: WindowContext[]): WindowContext {
  const gc: Record<string, number> = {};
  for (const c of cs) for (const [k, n] of Object.entries(c.gcOver10ms)) gc[k] = (gc[k] ?? 0) + n;
  const delays = cs.map((c) => c.loopDelayMaxMs).filter((x): x is number => x !== null);
  const forked = cs.filter((c) => c.redisForks > 0);
  return {
    gcOver10ms: gc,
    loopDelayMaxMs: delays.length ? Math.max(...delays) : null,
    redisForks: cs.reduce((n, c) => n + c.redisForks, 0),
    lastForkMs: forked.at(-1)?.lastForkMs ?? null,
    rewriting: cs.some((c) => c.rewriting),
  };
}
