/**
 * The shape of a bench run's results (bench/results/latest.json), and the figures derived from the raw
 * load results: throughput as a ratio to R1, and added latency — a row's latency at a fixed rate minus
 * R0's (the load generator straight to the mock) at the same rate, so what is left is what the row's
 * hop adds — also as a ratio to R1's.
 */
import type { LoadResult, Percentiles } from './load.js';
import type { Pinning } from './processes.js';
import type { ProfileSummary } from './cpu-profile.js';
import type { RoundTrips } from './redis-round-trips.js';
import type { WindowContext } from './window-context.js';
import type { HalfLoad, HalfLoadPair } from './half-load.js';
import type { WarmUp } from './warmup.js';

export const ROW_IDS = ['R0', 'R1', 'R2', 'R3', 'R4', 'R5'] as const;
export type RowId = (typeof ROW_IDS)[number];

export interface RowInfo {
  id: RowId;
  name: string;
  what: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
}

export interface ScenarioResults {
  id: string;
  label: string;
  size: 'small' | 'large';
  stream: boolean;
  bodyBytes: number;
  r1MaxRps: number;
  saturation: Partial<Record<RowId, LoadResult>>;
  rates: Array<{ fraction: number; targetRps: number; results: Partial<Record<RowId, LoadResult>> }>;
  /**
   * R3 at half of its own maximum, with R0 at the same rate: its added latency where it is not overloaded
   * (the fixed rates above are R1's, which R3 may not reach).
   */
  r3Own?: HalfLoad;
}

export interface Derived {
  scenario: string;
  row: RowId;
  rps: number;
  rpsRatio: number;
  /** CPU ms per answer of the row's server at saturation (R0: the mock's), and as a ratio to R1's. */
  cpuMsPerReq: number;
  cpuRatio: number;
  /** R3: redis-server's CPU ms per answer at saturation. */
  redisCpuMsPerReq?: number;
  /** Per load fraction: added latency (ms) at p50/p90/p99, its p50 ratio to R1's, and whether overloaded. */
  at: Array<{ fraction: number; p50: number; p90: number; p99: number; p50Ratio: number; overloaded: boolean; achievedRps: number }>;
}

export interface Budget {
  scenario: string;
  throughputRatio: number;
  p50AddedMsAt50: number;
  overloadedAt50: boolean;
  floor: boolean;
  aim: boolean;
}

export interface SoakResult {
  durationSec: number;
  rps: number;
  errors: number;
  samples: Array<{ t: number; rssMiB: number }>;
  startMiB: number;
  endMiB: number;
  minMiB: number;
  maxMiB: number;
  peakMiB: number;
  /** Least-squares slope over the run's second half, MiB per minute. */
  slopeMiBPerMin: number;
  grows: boolean;
  verdict: string;
}

export interface BenchResults {
  schema: 'portcullis-bench/1';
  mode: 'full' | 'quick';
  startedAt: string;
  finishedAt: string;
  elapsedSec: number;
  machine: {
    cpus: number;
    cpuModel: string;
    /** The Node running the harness (the load generator, the mock). */
    node: string;
    /** The Node the servers under test (R1-R4) ran on, when the run says (bench/harness/node-runtime.ts). */
    serverNode?: { version: string; how: string };
    platform: string;
    pinning: Pinning;
  };
  gateway: { source: string; note: string | null; store: string };
  settings: {
    connections: number;
    warmupSec: number;
    /** The warm-up every row and every separate R3 start gets first (bench/harness/warmup.ts). */
    warmup?: WarmUp;
    saturationSec: number;
    rateSec: number;
    /** Pairs of windows (R0, R3) the added latency at half of R3's own maximum is the median of. */
    p99Rounds?: number;
    loadFractions: number[];
    profileSec: number;
    soakSec: number;
  };
  rows: RowInfo[];
  scenarios: ScenarioResults[];
  derived: Derived[];
  budget: Budget[];
  /** Other processes' CPU use during the measurements (the machine is shared). */
  /** What the bench lost to others (cpu-usage.ts): other processes, and the hypervisor (steal). */
  contention: { threshold: number; retries: number; maxForeignCores: number; maxStealCores?: number; contended: string[] };
  profiles: Array<{ scenario: string; file: string | null; rps: number; summary: ProfileSummary | null; error?: string }>;
  /**
   * R3 (small, non-streaming) on a fresh Redis with `appendfsync always` and on one with `everysec`: its
   * maximum, CPU per call, and latency added over R0 at 50 % of that run's own maximum; with the time an
   * fsync takes on Redis' disk (harness/fsync.ts), which `always` adds to every money write.
   */
  durability?: {
    fsyncMs: Percentiles;
    runs: Array<{
      appendfsync: 'always' | 'everysec';
      rps: number;
      cpuMsPerReq: number;
      redisCpuMsPerReq: number;
      targetRps: number;
      overloaded: boolean;
      p50Added: number;
      p99Added: number;
      /** p99 added with both sides timed from their scheduled slot (load.ts), median over the pairs. */
      p99AddedFromSlot?: number;
      /** Each pair of windows (R0, then R3) the medians are over (bench/harness/half-load.ts). */
      pairs?: HalfLoadPair[];
      errors: number;
      /** What happened in the gateway and Redis during the fixed-rate windows. */
      context?: WindowContext;
    }>;
  };
  /** The guardrail scan of the largest admitted input (524,288 characters), bench/guard-scan.ts. */
  guardScan?: Array<{ input: string; chars: number; scanMs: number; redactMs: number }>;
  /** The guard's CPU per call without and with the intent model, bench/guard-intent.ts. */
  guardIntent?: Array<{ input: string; chars: number; team: string; before: number; after: number; model: boolean }>;
  /**
   * R3 at saturation (small, non-streaming) with 1, 2 and one per core worker processes (PORTCULLIS_WORKERS),
   * each beside R1 with as many node:cluster processes on the same cores: 1 pinned to the server core as R3
   * is, 2 on both cores (sharing one with the harness on 2 cores), all cores unpinned (`auto`).
   */
  workers?: Array<{ workers: number; label: string; cores: string; rps: number; p50: number; errors: number; r1Rps: number; r1Errors: number }>;
  /** The commands R3 sends to Redis for one small call (bench/harness/redis-round-trips.ts). */
  redisRoundTrips?: RoundTrips;
  memory: { r3PeakRssMiB: number | null; soak: SoakResult | null; redis: { usedMemoryMiB: number; keys: number; jobs: number } | null };
  notes: string[];
}

export const FLOOR = { throughput: 0.6, p50Ms: 1 };
export const AIM = { throughput: 0.75, p50Ms: 0.3 };

export function derive(scenarios: ScenarioResults[], rows: RowInfo[]): { derived: Derived[]; budget: Budget[] } {
  const derived: Derived[] = [];
  const budget: Budget[] = [];
  for (const s of scenarios) {
    const r1 = s.saturation.R1?.rps ?? Number.NaN;
    const addedOf = (row: RowId, i: number) => {
      const rate = s.rates[i]!;
      const x = rate.results[row];
      const base = rate.results.R0;
      if (!x || !base) return null;
      return {
        p50: x.latency.p50 - base.latency.p50,
        p90: x.latency.p90 - base.latency.p90,
        p99: x.latency.p99 - base.latency.p99,
        overloaded: x.overloaded ?? false,
        achievedRps: x.rps,
      };
    };
    for (const row of rows) {
      const sat = s.saturation[row.id];
      if (!sat) continue;
      const at = s.rates.map((rate, i) => {
        const a = addedOf(row.id, i);
        const r1a = addedOf('R1', i);
        return {
          fraction: rate.fraction,
          p50: a?.p50 ?? Number.NaN,
          p90: a?.p90 ?? Number.NaN,
          p99: a?.p99 ?? Number.NaN,
          // A ratio to an R1 figure at or below zero (noise at the harness' resolution) means nothing.
          p50Ratio: a && r1a && r1a.p50 > 0.005 ? a.p50 / r1a.p50 : Number.NaN,
          overloaded: a?.overloaded ?? false,
          achievedRps: a?.achievedRps ?? Number.NaN,
        };
      });
      const cpu = sat.serverCpuMsPerReq ?? Number.NaN;
      const r1cpu = s.saturation.R1?.serverCpuMsPerReq ?? Number.NaN;
      derived.push({
        scenario: s.id,
        row: row.id,
        rps: sat.rps,
        rpsRatio: sat.rps / r1,
        cpuMsPerReq: cpu,
        cpuRatio: cpu / r1cpu,
        ...(sat.redisCpuMsPerReq !== undefined ? { redisCpuMsPerReq: sat.redisCpuMsPerReq } : {}),
        at,
      });
    }
    const r3 = derived.find((d) => d.scenario === s.id && d.row === 'R3');
    if (r3) {
      const half = r3.at.find((a) => a.fraction === 0.5) ?? r3.at[Math.floor(r3.at.length / 2)];
      const p50 = half?.p50 ?? Number.NaN;
      const overloaded = half?.overloaded ?? false;
      budget.push({
        scenario: s.id,
        throughputRatio: r3.rpsRatio,
        p50AddedMsAt50: p50,
        overloadedAt50: overloaded,
        floor: r3.rpsRatio >= FLOOR.throughput && p50 < FLOOR.p50Ms && !overloaded,
        aim: r3.rpsRatio >= AIM.throughput && p50 < AIM.p50Ms && !overloaded,
      });
    }
  }
  return { derived, budget };
}

/** One figure of the performance targets' table: what this run measured against the target. */
export interface TargetRow {
  figure: string;
  value: number;
  /** How the value is written (unit, ×). */
  shown: string;
  target: string;
  met: boolean | null;
}

/**
 * The performance targets' table, from one run's results: seven figures, per core (one R3 worker against one
 * R1 process), latency on `everysec`. A figure the run could not measure is NaN and `met` null; a row with two
 * figures is met when both are.
 */
export function performanceTargets(r: BenchResults): TargetRow[] {
  const sat = (scenario: string, row: RowId) => r.scenarios.find((s) => s.id === scenario)?.saturation[row];
  const ratio = (a?: LoadResult, b?: LoadResult) => (a && b && b.rps > 0 ? a.rps / b.rps : Number.NaN);
  const everysec = r.durability?.runs.find((x) => x.appendfsync === 'everysec');
  const scan = r.guardScan?.find((g) => g.input.startsWith('realistic')) ?? r.guardScan?.[0];
  const soak = r.memory.soak;
  const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(2)}×` : 'not measured');
  const msOf = (v: number, d: number) => (Number.isFinite(v) ? `${v.toFixed(d)} ms` : 'not measured');
  /** A row of one or two figures: [value, shown, met] each. */
  const row = (figure: string, target: string, parts: Array<[number, string, (v: number) => boolean]>): TargetRow => {
    const measured = parts.filter(([v]) => Number.isFinite(v));
    return {
      figure,
      value: parts[0]![0],
      shown: measured.length === 0 ? 'not measured' : parts.map(([, shown]) => shown).join(' / '),
      target,
      met: measured.length < parts.length ? null : parts.every(([v, , ok]) => ok(v)),
    };
  };
  const cpuSmall = sat('small', 'R3')?.serverCpuMsPerReq ?? Number.NaN;
  const cpuLarge = sat('large', 'R3')?.serverCpuMsPerReq ?? Number.NaN;
  const scanMs = scan?.scanMs ?? Number.NaN;
  const p50 = everysec?.p50Added ?? Number.NaN;
  const p99 = everysec?.p99Added ?? Number.NaN;
  const r1Small = ratio(sat('small', 'R3'), sat('small', 'R1'));
  const r1Large = ratio(sat('large', 'R3'), sat('large', 'R1'));
  const portkey = ratio(sat('small', 'R3'), sat('small', 'R4'));
  const litellm = ratio(sat('small', 'R3'), sat('small', 'R5'));
  const rss = soak ? soakFloor(soak) : Number.NaN;
  return [
    row('gateway CPU per small call', '≤ 0.40 ms', [[cpuSmall, msOf(cpuSmall, 3), (v) => v <= 0.4]]),
    row('gateway CPU per 100 KB call', '≤ 1.5 ms', [[cpuLarge, msOf(cpuLarge, 3), (v) => v <= 1.5]]),
    row(`guardrail scan, ${scan?.chars.toLocaleString('en-US') ?? '524,288'} characters${scan ? ` (${scan.input.split(':')[0]})` : ''}`, '≤ 5 ms', [
      [scanMs, msOf(scanMs, 1), (v) => v <= 5],
    ]),
    row("p50 / p99 added at 50 % of R3's own maximum (everysec)", '≤ 1.0 / 5 ms', [
      [p50, msOf(p50, 2), (v) => v <= 1],
      [p99, msOf(p99, 2), (v) => v <= 5],
    ]),
    row('R3 / R1 throughput, small / 100 KB', '≥ 0.20× / ≥ 0.20×', [
      [r1Small, x(r1Small), (v) => v >= 0.2],
      [r1Large, x(r1Large), (v) => v >= 0.2],
    ]),
    row('R3 / Portkey, R3 / LiteLLM proxy, small', '≥ 3× / ≥ 12×', [
      [portkey, x(portkey), (v) => v >= 3],
      [litellm, x(litellm), (v) => v >= 12],
    ]),
    row('RSS after the soak (its floor over the last quarter)', '≤ 150 MiB, flat', [
      [rss, Number.isFinite(rss) ? `${rss.toFixed(0)} MiB${soak?.grows ? ', growing' : ', flat'}` : 'not measured', (v) => v <= 150 && !soak?.grows],
    ]),
  ];
}

/** The lowest RSS over the last quarter of the soak: where GC brings it back to at the end. */
function soakFloor(s: SoakResult): number {
  const from = 0.75 * s.durationSec;
  const last = s.samples.filter((x) => x.t >= from).map((x) => x.rssMiB);
  return last.length ? Math.min(...last) : s.endMiB;
}
