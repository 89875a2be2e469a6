/**
 * `npm run bench`: portcullis against a bare Node proxy, Koa, and a peer gateway, on one machine, in one
 * interleaved run against the same instant mock upstream. See README, Performance, and
 * bench/results/latest.md for what each row is and what the figures mean.
 *
 *   npm run bench                       full run (~18 min on 2 cores): bench/results/latest.{json,md}, README
 *   npm run bench -- --quick            a smoke run of a few seconds into a temp dir (no README, no speed checks)
 *   options: --out DIR  --no-pin  --no-readme  --gateway auto|worktree|head  --rows R0,R1,R3  --soak SEC
 *            --node auto|current|22|24  (the Node the Node rows run on: by default the newest supported line
 *                       scripts/node.sh has unpacked, as production runs Node 24; bench/harness/node-runtime.ts)
 *            --scenarios small,small-stream,large,large-stream  (a partial run: R0 and R1 always run)
 *            --rewrite  (no run: rewrite latest.md, and the README unless --no-readme, from latest.json,
 *                       the soak's verdict derived again from its samples)
 *
 * Steps: pin (taskset) -> mock upstream, redis-server -> build portcullis from a snapshot -> start the rows
 * -> check each row answers correctly -> per scenario: warm-up and saturation for every row, then every
 * row at 25/50/75 % of R1's maximum -> R3 under `--cpu-prof` -> a soak of R3 for its RSS -> results.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from 'redis';
import { startRedisServer, type RedisServer } from '../test/helpers/redis-server.js';
import { BENCH_MODEL, bodyTemplate, oneBody, type BodySpec, type BodyTemplate } from './harness/bodies.js';
import { runLoad, type LoadResult } from './harness/load.js';
import { httpAnswers, memoryOf, pinSelf, startServer, type Pinning, type ServerProcess } from './harness/processes.js';
import { ADMIN_TOKEN, buildSnapshot, REPO, startPortcullis, type Portcullis, type Snapshot, type SourceChoice } from './harness/portcullis.js';
import { summariseProfile } from './harness/cpu-profile.js';
import { CpuWatch, findRedisPid, HZ, processTicks, type Contention } from './harness/cpu-usage.js';
import { derive, ROW_IDS, type BenchResults, type RowId, type RowInfo, type ScenarioResults, type SoakResult } from './harness/results.js';
import { updateReadme, writeResults } from './harness/report.js';
import { freePort } from '../test/helpers/ports.js';
import { measureFsync } from './harness/fsync.js';
import { measureRoundTrips, ROUND_TRIP_BUDGET, type RoundTrips } from './harness/redis-round-trips.js';
import { chooseNode } from './harness/node-runtime.js';
import { describeContext, rewriteAofFirst, watchWindow } from './harness/window-context.js';
import { FULL_WARMUP, QUICK_WARMUP, warmUp } from './harness/warmup.js';
import { halfLoadRounds } from './harness/half-load.js';
import { installLitellm, LITELLM, LITELLM_MASTER_KEY, litellmInstalled, startLitellm } from './harness/litellm.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    'no-readme': { type: 'boolean', default: false },
    gateway: { type: 'string', default: 'auto' },
    rows: { type: 'string' },
    soak: { type: 'string' },
    scenarios: { type: 'string' },
    rewrite: { type: 'boolean', default: false },
    node: { type: 'string', default: 'auto' },
  },
});
const quick = args.quick;
const settings = quick
  ? {
      connections: 8,
      warmupSec: 0.15,
      warmup: QUICK_WARMUP,
      saturationSec: 0.3,
      rateSec: 0.25,
      p99Rounds: 1,
      loadFractions: [0.25, 0.5, 0.75],
      profileSec: 1,
      soakSec: Number(args.soak ?? 2),
    }
  : {
      connections: 32,
      warmupSec: 2,
      warmup: FULL_WARMUP,
      saturationSec: 4,
      rateSec: 3,
      p99Rounds: 5,
      loadFractions: [0.25, 0.5, 0.75],
      profileSec: 6,
      soakSec: Number(args.soak ?? 60),
    };
const SCENARIOS: Array<BodySpec & { id: string; label: string }> = [
  { id: 'small', label: 'small, non-streaming', size: 'small', stream: false },
  { id: 'small-stream', label: 'small, streaming', size: 'small', stream: true },
  { id: 'large', label: 'large, non-streaming', size: 'large', stream: false },
  { id: 'large-stream', label: 'large, streaming', size: 'large', stream: true },
];
const scenarios = args.scenarios
  ? SCENARIOS.filter((s) => args.scenarios!.split(',').includes(s.id))
  : quick
    ? SCENARIOS.filter((s) => s.id === 'small' || s.id === 'large-stream')
    : SCENARIOS;
const wantedRows = new Set<RowId>((args.rows?.split(',') as RowId[] | undefined) ?? [...ROW_IDS]);
wantedRows.add('R0').add('R1'); // every ratio is to R1, every added latency over R0
const outDir = args.out ?? (quick ? mkdtempSync(join(tmpdir(), 'portcullis-bench-quick-')) : join(REPO, 'bench/results'));
mkdirSync(outDir, { recursive: true });

const log = (line: string) => process.stdout.write(`${line}\n`);
const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
const notes: string[] = [];
/** Foreign CPU (cores) above which a measurement counts as contended. */
const CONTENDED = 0.2;
const MAX_RETRIES = 8;
/** No re-runs after this much of the run, so that a busy machine cannot push it past 10 minutes. */
const RETRY_UNTIL_MS = 6.5 * 60_000;
const contention = { retries: 0, maxForeignCores: 0, maxStealCores: 0 };
/** Records what a run lost to others; `lost` is the sum, in cores (unknown counts as nothing). */
const note = (r: LoadResult, c: Contention | null) => {
  r.foreignCores = c?.foreign ?? null;
  r.stealCores = c?.steal ?? null;
};
const lost = (r: LoadResult) => (r.foreignCores ?? 0) + (r.stealCores ?? 0);

interface Target {
  info: RowInfo;
  url: string;
  headers: Record<string, string>;
  server?: ServerProcess;
  /** The process whose CPU per request is reported: the server under test (for R0, the mock). */
  pid?: number;
  usesRedis?: boolean;
}

// --- start ---------------------------------------------------------------------------------------------

/** The cores this machine gives the bench, read before it pins itself to one. */
const machineCores = availableParallelism();
const pin: Pinning = pinSelf(!args['no-pin']);
log(`[${elapsed()}] ${pin.how}`);
/** The Node every Node row (R1, R2, R3, R4) and the guard's measurements run on; the harness runs on this one. */
const serverNode = args.rewrite ? null : chooseNode(REPO, args.node);
const nodeBin = serverNode?.path ?? process.execPath;
if (serverNode) log(`[${elapsed()}] servers under test on Node ${serverNode.version} (${serverNode.how}); harness on Node ${process.version}`);

const cleanups: Array<() => Promise<void> | void> = [];
async function cleanup(): Promise<void> {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
}

/** The harness processes run where this process runs (core 0), not on the servers' core. */
const harnessPin: Pinning = { ...pin, enabled: false };

async function main(): Promise<void> {
  const mock = await startServer({
    name: 'mock upstream',
    args: ['--import', 'tsx', join(REPO, 'bench/harness/mock-upstream.ts')],
    pin: harnessPin,
    ready: /listening (\d+)/,
  });
  cleanups.push(() => mock.stop());
  const mockBase = `http://127.0.0.1:${mock.port}/v1`;
  const redis: RedisServer = await startRedisServer();
  cleanups.push(() => redis.stop());
  log(`[${elapsed()}] mock upstream on ${mockBase}, redis-server on ${redis.url}`);

  const ownPids = new Set<number>([process.pid, mock.pid]);
  const redisPid = findRedisPid(redis.port);
  if (redisPid) ownPids.add(redisPid);
  const watch = new CpuWatch(() => [...ownPids]);

  // The build runs while the other rows start.
  const building = buildSnapshot(args.gateway as SourceChoice, log).then((s) => {
    cleanups.push(() => s.remove());
    log(`[${elapsed()}] built portcullis from ${s.source}`);
    return s;
  });
  building.catch(() => undefined);

  const targets: Target[] = [];
  const R0: Target = {
    info: {
      id: 'R0',
      name: 'harness → mock',
      what: 'the load generator straight to the mock upstream: the harness ceiling, and the latency every added latency is measured over',
      status: 'ok',
    },
    url: `http://127.0.0.1:${mock.port}/v1/chat/completions`,
    headers: {},
    pid: mock.pid,
  };
  targets.push(R0);
  const proxyRow = async (id: RowId, name: string, what: string, script: string): Promise<Target> => {
    const server = await startServer({
      name: `${id} ${name}`,
      command: nodeBin,
      args: ['--import', 'tsx', join(REPO, script)],
      env: { UPSTREAM: mockBase, PORT: '0' },
      pin,
      ready: /listening (\d+)/,
    });
    cleanups.push(() => server.stop());
    ownPids.add(server.pid);
    return { info: { id, name, what, status: 'ok' }, url: `http://127.0.0.1:${server.port}/v1/chat/completions`, headers: {}, server, pid: server.pid };
  };
  const startR4 = async (): Promise<Target> => {
    const info: RowInfo = {
      id: 'R4',
      name: 'Portkey gateway',
      what: "Portkey's open-source gateway (@portkey-ai/gateway, headless), `x-portkey-provider: openai` with its custom host at the mock",
      status: 'ok',
    };
    try {
      const port = await freePort();
      const server = await startServer({
        name: 'R4 Portkey',
        command: nodeBin,
        args: ['--import', 'tsx', join(REPO, 'bench/harness/portkey.ts'), `--port=${port}`, '--headless'],
        env: { NODE_ENV: 'production' },
        pin,
        ready: () => httpAnswers(`http://127.0.0.1:${port}/`),
      });
      cleanups.push(() => server.stop());
      ownPids.add(server.pid);
      return {
        info,
        url: `http://127.0.0.1:${port}/v1/chat/completions`,
        headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': mockBase, authorization: 'Bearer sk-bench-not-a-key' },
        server,
        pid: server.pid,
      };
    } catch (err) {
      info.status = 'skipped';
      info.reason = `Portkey's gateway did not start here (${(err as Error).message.split('\n')[0]}); R4 is optional`;
      log(`[${elapsed()}] R4 skipped: ${info.reason}`);
      return { info, url: '', headers: {} };
    }
  };
  const startR5 = async (): Promise<Target> => {
    const info: RowInfo = {
      id: 'R5',
      name: 'LiteLLM proxy',
      what: `the LiteLLM proxy (PyPI litellm[proxy]==${LITELLM}, in bench/.venv), one worker, its model on the OpenAI-compatible provider at the mock`,
      status: 'ok',
    };
    try {
      if (quick && !litellmInstalled()) throw new Error('not installed in bench/.venv (the full bench installs it; the quick run does not download)');
      if (!quick) installLitellm((l) => log(`[${elapsed()}] ${l.trim()}`));
      const port = await freePort();
      const server = await startLitellm({ port, mockBaseUrl: mockBase, model: BENCH_MODEL, pin });
      cleanups.push(() => server.stop());
      ownPids.add(server.pid);
      return { info, url: `http://127.0.0.1:${port}/v1/chat/completions`, headers: { authorization: `Bearer ${LITELLM_MASTER_KEY}` }, server, pid: server.pid };
    } catch (err) {
      info.status = 'skipped';
      info.reason = `the LiteLLM proxy did not start here (${(err as Error).message.split('\n')[0]}); R5 is optional`;
      log(`[${elapsed()}] R5 skipped: ${info.reason}`);
      return { info, url: '', headers: {} };
    }
  };
  const r4Starting = wantedRows.has('R4') ? startR4() : Promise.resolve(null);
  const r5Starting = wantedRows.has('R5') ? startR5() : Promise.resolve(null);
  const [r1, r2] = await Promise.all([
    proxyRow(
      'R1',
      'bare node:http + undici',
      'a bare node:http server forwarding to the mock over an undici Pool, streaming the body through: the physical limit of a Node gateway',
      'bench/harness/bare-proxy.ts',
    ),
    wantedRows.has('R2')
      ? proxyRow('R2', 'Koa + undici', "the same forwarding inside Koa with @koa/router: the framework's cost", 'bench/harness/koa-proxy.ts')
      : null,
  ]);
  targets.push(r1);
  if (r2) targets.push(r2);
  const snapshot: Snapshot = await building;

  let r3: Portcullis | null = null;
  if (wantedRows.has('R3')) {
    r3 = await startPortcullis({ snapshot, mockBaseUrl: mockBase, redisUrl: redis.url, pin, node: nodeBin });
    cleanups.push(() => r3!.server.stop());
    ownPids.add(r3.server.pid);
    targets.push({
      info: {
        id: 'R3',
        name: 'portcullis',
        what: 'portcullis (built dist/main.js) on redis-server: PAT lookup, compiled policy decision, guardrail scan, reservation, job, forwarding, settlement, receipt',
        status: 'ok',
      },
      url: `${r3.apiUrl}/v1/chat/completions`,
      headers: { authorization: `Bearer ${r3.token}` },
      server: r3.server,
      pid: r3.server.pid,
      usesRedis: true,
    });
  }

  const r4 = await r4Starting;
  if (r4) targets.push(r4);
  const r5 = await r5Starting;
  if (r5) targets.push(r5);
  const live = () => targets.filter((t) => t.info.status === 'ok');
  if (r3) notes.push(`The R3 principal is a blue-team principal with ${r3.credits}.`);
  log(`[${elapsed()}] rows: ${targets.map((t) => `${t.info.id} ${t.info.status}`).join(', ')}`);

  // --- check every row answers correctly, and that R3 walks the whole admitted path --------------------

  if (!quick) {
    const c = await watch.quiet(CONTENDED / 2, 30_000);
    log(
      `[${elapsed()}] before the matrix, ${c === null ? 'an unknown share of the CPU goes elsewhere' : `other processes use ${c.foreign.toFixed(2)} cores and the hypervisor takes ${c.steal.toFixed(2)} (steal)`}`,
    );
  }

  const templates = new Map<string, BodyTemplate>(scenarios.map((s) => [s.id, bodyTemplate(s)]));
  for (const s of scenarios) {
    for (const t of live()) {
      const res = await fetch(t.url, { method: 'POST', headers: { 'content-type': 'application/json', ...t.headers }, body: oneBody(templates.get(s.id)!) });
      const text = await res.text();
      const good =
        res.status === 200 && (s.stream ? text.includes('data: [DONE]') && text.includes('chat.completion.chunk') : text.includes('"chat.completion"'));
      if (!good) {
        t.info.status = 'failed';
        t.info.reason = `the check request (${s.label}) answered ${res.status}: ${text.slice(0, 300)}`;
        log(`[${elapsed()}] ${t.info.id} failed its check: ${t.info.reason}`);
        continue;
      }
      if (t.info.id === 'R3' && r3) {
        const receiptId = s.stream ? /"receiptId":"([^"]+)"/.exec(text)?.[1] : (JSON.parse(text) as { receiptId?: string }).receiptId;
        const receipt = (await r3.adminGet(`/receipts/${receiptId}`)) as { outcome?: string; guardrails?: Record<string, unknown[]> };
        const g = receipt.guardrails ?? {};
        if (receipt.outcome !== 'answered' || Object.values(g).some((x) => x.length > 0)) {
          throw new Error(`R3's check call (${s.label}) did not take the clean admitted path: receipt ${JSON.stringify(receipt).slice(0, 400)}`);
        }
      }
    }
  }
  if (live().some((t) => t.info.id === 'R1') === false) throw new Error('R1 failed its check; every figure is a ratio to R1');

  // --- R3's Redis commands per call: a budget figure, reported (not a gate) -------------------------------

  let redisRoundTrips: RoundTrips | undefined;
  if (r3 && live().some((t) => t.info.id === 'R3')) {
    try {
      const small = templates.get('small') ?? bodyTemplate(SCENARIOS[0]!);
      redisRoundTrips = await measureRoundTrips({
        redisUrl: redis.url,
        call: async (token) =>
          (
            await fetch(`${r3.apiUrl}/v1/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
              body: oneBody(small),
            })
          ).text(),
        newToken: () => r3.newToken(),
      });
      log(
        `[${elapsed()}] R3 sends ${redisRoundTrips.steady.length} Redis commands per call (a token's first: ${redisRoundTrips.first.length}); budget ${ROUND_TRIP_BUDGET.commands}: ${redisRoundTrips.met ? 'met' : 'OVER'}`,
      );
    } catch (err) {
      notes.push(`The Redis round-trip figure is missing: ${(err as Error).message.split('\n')[0]}`);
    }
  }

  // --- the matrix -----------------------------------------------------------------------------------------

  const load = async (t: Pick<Target, 'url' | 'headers'> & { pid?: number; usesRedis?: boolean }, body: BodyTemplate, durationSec: number, rate?: number) => {
    const server0 = t.pid ? processTicks(t.pid) : 0;
    const redis0 = t.usesRedis && redisPid ? processTicks(redisPid) : 0;
    // At saturation a window always counts at least one answer: on a loaded machine a short (quick) window can
    // close before the first 100 KB answer is back, which would say nothing about the row (load.ts).
    const r = await runLoad({ url: t.url, headers: t.headers, body, connections: settings.connections, durationSec, ...(rate ? { rate } : { minAnswers: 1 }) });
    const perReq = (ticks: number) => (r.ok > 0 ? (ticks * (1000 / HZ)) / r.ok : Number.NaN);
    if (t.pid) r.serverCpuMsPerReq = perReq(processTicks(t.pid) - server0);
    if (t.usesRedis && redisPid) r.redisCpuMsPerReq = perReq(processTicks(redisPid) - redis0);
    return r;
  };
  /** A load run whose figures are kept: watched for foreign CPU use, and re-run once if contended. */
  const measure = async (
    t: Pick<Target, 'url' | 'headers'> & { pid?: number; usesRedis?: boolean },
    body: BodyTemplate,
    durationSec: number,
    rate?: number,
  ): Promise<LoadResult> => {
    const stop = watch.start();
    let r = await load(t, body, durationSec, rate);
    note(r, stop());
    if (!quick && lost(r) > CONTENDED && contention.retries < MAX_RETRIES && Date.now() - t0 < RETRY_UNTIL_MS) {
      contention.retries++;
      log(
        `[${elapsed()}]   contended (other processes ${r.foreignCores!.toFixed(2)} cores, steal ${r.stealCores!.toFixed(2)}): waiting for quiet, then once more`,
      );
      await watch.quiet(CONTENDED / 2, 6_000);
      await load(t, body, Math.min(1, settings.warmupSec));
      const again = watch.start();
      const second = await load(t, body, durationSec, rate);
      note(second, again());
      second.retried = true;
      // Contention only ever slows a row down: at saturation keep the faster attempt, at a fixed rate the
      // less contended one.
      const better = rate === undefined ? second.rps > r.rps : lost(second) < lost(r);
      r = better ? second : { ...r, retried: true };
    }
    if (r.foreignCores != null) contention.maxForeignCores = Math.max(contention.maxForeignCores, r.foreignCores);
    if (r.stealCores != null) contention.maxStealCores = Math.max(contention.maxStealCores, r.stealCores);
    return r;
  };
  // Every row is warmed up first on large and small bodies (bench/harness/warmup.ts: V8 goes on compiling a
  // gateway's path for about half a minute of load); this also spends R3's principal's free allowance (1,000
  // calls), so the matrix measures the paid path throughout. Every separate R3 start below gets the same.
  const warmBodies = {
    small: templates.get('small') ?? bodyTemplate(SCENARIOS[0]!),
    large: templates.get('large') ?? bodyTemplate(SCENARIOS[2]!),
  };
  const warm = (t: Pick<Target, 'url' | 'headers'>) => warmUp((b, sec) => load(t, b, sec), warmBodies, settings.warmup);
  for (const t of live()) await warm(t);
  log(`[${elapsed()}] warmed up every row`);

  const results: ScenarioResults[] = [];
  for (const s of scenarios) {
    const body = templates.get(s.id)!;
    const res: ScenarioResults = { id: s.id, label: s.label, size: s.size, stream: s.stream, bodyBytes: body.bytes, r1MaxRps: 0, saturation: {}, rates: [] };
    for (const t of live()) {
      await load(t, body, settings.warmupSec);
      const r = await measure(t, body, settings.saturationSec);
      res.saturation[t.info.id] = r;
      log(
        `[${elapsed()}] ${s.id.padEnd(12)} ${t.info.id} saturation ${Math.round(r.rps).toString().padStart(6)} req/s  p50 ${r.latency.p50.toFixed(2)} ms  cpu ${r.serverCpuMsPerReq?.toFixed(3)} ms/req${r.redisCpuMsPerReq !== undefined ? ` (+ redis ${r.redisCpuMsPerReq.toFixed(3)})` : ''}${r.errors ? `  errors ${r.errors}` : ''}`,
      );
    }
    res.r1MaxRps = res.saturation.R1!.rps;
    for (const fraction of settings.loadFractions) {
      const targetRps = Math.max(1, Math.round(res.r1MaxRps * fraction));
      const at: ScenarioResults['rates'][number] = { fraction, targetRps, results: {} };
      for (const t of live()) {
        const r = await measure(t, body, settings.rateSec, targetRps);
        at.results[t.info.id] = r;
        log(
          `[${elapsed()}] ${s.id.padEnd(12)} ${t.info.id} @${String(Math.round(fraction * 100)).padStart(2)} % ${targetRps} req/s: ${Math.round(r.rps)} req/s  p50 ${r.latency.p50.toFixed(2)} p90 ${r.latency.p90.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} ms${r.overloaded ? '  OVERLOADED' : ''}${r.errors ? `  errors ${r.errors}` : ''}`,
        );
      }
      res.rates.push(at);
    }
    const r3sat = res.saturation.R3;
    const r0 = targets.find((t) => t.info.id === 'R0')!;
    const r3t = live().find((t) => t.info.id === 'R3');
    if (r3sat && r3t && r3sat.rps > 2) {
      const targetRps = Math.max(1, Math.round(r3sat.rps / 2));
      res.r3Own = await halfLoadRounds({
        rounds: settings.p99Rounds,
        targetRps,
        before: () => rewriteAofFirst(redis.url),
        r0: () => measure(r0, body, settings.rateSec, targetRps),
        r3: () => measure(r3t, body, settings.rateSec, targetRps),
        watch: () => watchWindow({ adminUrl: r3!.adminUrl, adminToken: ADMIN_TOKEN }, redis.url),
      });
      const b = res.r3Own.R3;
      const context = res.r3Own.context!;
      log(
        `[${elapsed()}] ${s.id.padEnd(12)} R3 @50 % of its own max (${targetRps} req/s): p50 ${b.latency.p50.toFixed(2)} ms, added ${res.r3Own.p50Added.toFixed(2)} ms, p99 added ${res.r3Own.p99Added.toFixed(2)} ms (median of ${res.r3Own.pairs.length}: ${res.r3Own.pairs.map((x) => x.p99Added.toFixed(1)).join(', ')}; from the slot ${res.r3Own.p99AddedFromSlot.toFixed(2)})${b.overloaded ? '  OVERLOADED' : ''}; ${describeContext(context)}`,
      );
    }
    results.push(res);
  }
  const r3Peak = r3 ? (memoryOf(r3.server.pid)?.peakMiB ?? null) : null;

  /**
   * An extra R3 start, tried twice: on a loaded machine the bench principal's first store call on a fresh
   * Redis can miss the store's 2 s deadline (store-unavailable), which says nothing about the figure wanted.
   */
  const startOnce = async (o: Parameters<typeof startPortcullis>[0]): Promise<Portcullis> => {
    try {
      return await startPortcullis(o);
    } catch (err) {
      log(`[${elapsed()}] ${o.name ?? 'R3'} did not start (${(err as Error).message.split('\n')[0]}); once more`);
      return startPortcullis(o);
    }
  };

  // --- R3 on an `appendfsync always` Redis and on an `everysec` one, with the disk's fsync time -------------

  const durability: NonNullable<BenchResults['durability']> = { fsyncMs: measureFsync(redis.dir), runs: [] };
  log(`[${elapsed()}] fsync on Redis' disk: p50 ${durability.fsyncMs.p50.toFixed(3)} ms, p99 ${durability.fsyncMs.p99.toFixed(3)} ms`);
  if (r3) {
    const body = templates.get('small') ?? bodyTemplate(SCENARIOS[0]!);
    const r0 = targets.find((t) => t.info.id === 'R0')!;
    for (const appendfsync of ['always', 'everysec'] as const) {
      // A fresh Redis each, so neither inherits the other's data; `always` is what the helper starts.
      const rs = await startRedisServer();
      try {
        if (appendfsync !== 'always') {
          const c = createClient({ url: rs.url });
          await c.connect();
          await c.configSet('appendfsync', appendfsync);
          await c.quit();
        }
        const rsPid = findRedisPid(rs.port);
        if (rsPid) ownPids.add(rsPid);
        const p = await startOnce({
          snapshot,
          mockBaseUrl: mockBase,
          redisUrl: rs.url,
          pin,
          node: nodeBin,
          name: `R3 portcullis (appendfsync ${appendfsync})`,
        });
        ownPids.add(p.server.pid);
        try {
          const target = { url: `${p.apiUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${p.token}` }, pid: p.server.pid };
          // The same warm-up as the matrix's rows: the path compiled, and the free allowance spent.
          await warm(target);
          const redis0 = rsPid ? processTicks(rsPid) : 0;
          const sat = await measure(target, body, settings.saturationSec);
          const perReq = (ticks: number) => (sat.ok > 0 ? (ticks * (1000 / HZ)) / sat.ok : Number.NaN);
          const redisCpu = rsPid ? perReq(processTicks(rsPid) - redis0) : Number.NaN;
          const targetRps = Math.max(1, Math.round(sat.rps / 2));
          const half = await halfLoadRounds({
            rounds: settings.p99Rounds,
            targetRps,
            before: () => rewriteAofFirst(rs.url),
            r0: () => measure(r0, body, settings.rateSec, targetRps),
            r3: () => measure(target, body, settings.rateSec, targetRps),
            watch: () => watchWindow({ adminUrl: p.adminUrl, adminToken: ADMIN_TOKEN }, rs.url),
          });
          const b = half.R3;
          const context = half.context!;
          durability.runs.push({
            appendfsync,
            rps: sat.rps,
            cpuMsPerReq: sat.serverCpuMsPerReq ?? Number.NaN,
            redisCpuMsPerReq: redisCpu,
            targetRps,
            overloaded: half.pairs.some((x) => x.r3.overloaded),
            p50Added: half.p50Added,
            p99Added: half.p99Added,
            p99AddedFromSlot: half.p99AddedFromSlot,
            pairs: half.pairs,
            errors: sat.errors + half.r3Errors,
            context,
          });
          log(
            `[${elapsed()}] R3 on appendfsync ${appendfsync}: ${Math.round(sat.rps)} req/s, cpu ${sat.serverCpuMsPerReq?.toFixed(3)} ms/req; at ${targetRps} req/s p50 added ${half.p50Added.toFixed(2)} ms, p99 added ${half.p99Added.toFixed(2)} ms (median of ${half.pairs.length}: ${half.pairs.map((x) => x.p99Added.toFixed(1)).join(', ')}; from the slot ${half.p99AddedFromSlot.toFixed(2)})${b.overloaded ? '  OVERLOADED' : ''}; ${describeContext(context)}`,
          );
        } finally {
          await p.server.stop();
        }
      } catch (err) {
        notes.push(`R3 on appendfsync ${appendfsync} did not run: ${(err as Error).message.split('\n')[0]}`);
        log(`[${elapsed()}] R3 on appendfsync ${appendfsync} failed: ${(err as Error).message}`);
      } finally {
        await rs.stop();
      }
    }
  }

  // --- the guardrail scan of the largest admitted input (bench/guard-scan.ts, on the server core) ----------

  const guardScan: NonNullable<BenchResults['guardScan']> = [];
  try {
    // The snapshot R3 runs, built: the scan's own code as the gateway runs it.
    const argv = ['--import', 'tsx', join(REPO, 'bench/guard-scan.ts'), '--json', `--built=${snapshot.dir}`, 'realistic,code review'];
    const out = execFileSync(pin.enabled ? 'taskset' : nodeBin, pin.enabled ? ['-c', String(pin.serverCore), nodeBin, ...argv] : argv, {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 120_000,
    });
    for (const line of out.split('\n').filter((l) => l.startsWith('{'))) guardScan.push(JSON.parse(line) as (typeof guardScan)[number]);
    for (const g of guardScan)
      log(`[${elapsed()}] guardrail scan, ${g.input} (${g.chars} chars): scan ${g.scanMs.toFixed(1)} ms, redact ${g.redactMs.toFixed(1)} ms`);
  } catch (err) {
    notes.push(`The guardrail scan figure is missing: ${(err as Error).message.split('\n')[0]}`);
  }

  // --- the guard's CPU per call with and without the intent model (bench/guard-intent.ts, server core) ------

  const guardIntent: NonNullable<BenchResults['guardIntent']> = [];
  try {
    const argv = ['--import', 'tsx', join(REPO, 'bench/guard-intent.ts'), '--json'];
    const out = execFileSync(pin.enabled ? 'taskset' : nodeBin, pin.enabled ? ['-c', String(pin.serverCore), nodeBin, ...argv] : argv, {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 300_000,
    });
    for (const line of out.split('\n').filter((l) => l.startsWith('{'))) guardIntent.push(JSON.parse(line) as (typeof guardIntent)[number]);
    for (const g of guardIntent)
      log(
        `[${elapsed()}] guard CPU, ${g.input}, ${g.team}: ${g.before.toFixed(2)} ms before, ${g.after.toFixed(2)} ms with the intent model${g.model ? '' : ' (not read by it)'}`,
      );
  } catch (err) {
    notes.push(`The intent model's CPU figure is missing: ${(err as Error).message.split('\n')[0]}`);
  }

  // --- R3 and R1 at 1, 2 and all cores (PORTCULLIS_WORKERS; R1 as as many node:cluster processes) ---------

  const workers: NonNullable<BenchResults['workers']> = [];
  if (r3) {
    const body = templates.get('small') ?? bodyTemplate(SCENARIOS[0]!);
    const all = machineCores;
    // 1 worker on the server core, as R3 runs; 2 on both cores (with the harness on one of them, on 2 cores);
    // and `PORTCULLIS_WORKERS=auto` (one per core) unpinned, as production runs it. The bench pinned itself, and
    // its children inherit that: "unpinned" is every core given back (taskset -c 0-N-1), with nothing reserved.
    const counts = [
      { n: 1, label: '1', pinned: true },
      { n: 2, label: '2', pinned: true },
      { n: all, label: `all (${all})`, pinned: false },
    ];
    for (const { n, label, pinned } of counts) {
      const at: Pinning = pin;
      const cores = !pinned || !at.enabled ? 'unpinned' : n > 1 ? `0-${n - 1} (shared with the harness)` : String(at.serverCore);
      const taskset = pinned ? (n > 1 ? `0-${n - 1}` : undefined) : `0-${all - 1}`;
      try {
        // R1 with as many processes, on the same cores.
        const r1n = await startServer({
          name: `R1 bare node:http + undici (${n} processes)`,
          command: nodeBin,
          args: ['--import', 'tsx', join(REPO, 'bench/harness/bare-proxy.ts')],
          env: { UPSTREAM: mockBase, PORT: '0', WORKERS: String(n) },
          pin: at,
          ...(taskset ? { cores: taskset } : {}),
          ready: /listening (\d+)/,
        });
        let r1Result: LoadResult;
        try {
          const target = { url: `http://127.0.0.1:${r1n.port}/v1/chat/completions`, headers: {} };
          await warm(target);
          r1Result = await load(target, body, settings.saturationSec);
        } finally {
          await r1n.stop();
        }
        const p = await startOnce({
          snapshot,
          mockBaseUrl: mockBase,
          redisUrl: redis.url,
          pin: at,
          node: nodeBin,
          workers: pinned ? n : 'auto',
          ...(taskset ? { cores: taskset } : {}),
          name: `R3 portcullis (${pinned ? n : 'auto'} worker${n > 1 ? 's' : ''})`,
        });
        try {
          const target = { url: `${p.apiUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${p.token}` } };
          // The shared warm-up (each worker gets its share of it: the kernel spreads the connections).
          await warm(target);
          const r = await load(target, body, settings.saturationSec);
          workers.push({ workers: n, label, cores, rps: r.rps, p50: r.latency.p50, errors: r.errors, r1Rps: r1Result.rps, r1Errors: r1Result.errors });
          log(
            `[${elapsed()}] ${label} cores: R3 with ${n} worker(s) ${Math.round(r.rps)} req/s, p50 ${r.latency.p50.toFixed(2)} ms${r.errors ? `, errors ${r.errors}` : ''}; R1 with ${n} process(es) ${Math.round(r1Result.rps)} req/s`,
          );
        } finally {
          await p.server.stop();
        }
      } catch (err) {
        notes.push(`R3 and R1 at ${label} cores did not run: ${(err as Error).message.split('\n')[0]}`);
        log(`[${elapsed()}] R3 and R1 at ${label} cores failed: ${(err as Error).message}`);
      }
    }
  }

  // --- R3 under the profiler ------------------------------------------------------------------------------

  const profiles: BenchResults['profiles'] = [];
  if (r3) {
    for (const id of quick ? ['small'] : ['small', 'large']) {
      const spec = SCENARIOS.find((s) => s.id === id)!;
      const body = templates.get(id) ?? bodyTemplate(spec);
      const dir = mkdtempSync(join(tmpdir(), 'portcullis-bench-prof-'));
      try {
        const p = await startPortcullis({
          snapshot,
          mockBaseUrl: mockBase,
          redisUrl: redis.url,
          pin,
          node: nodeBin,
          nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`],
          name: 'R3 portcullis (--cpu-prof)',
        });
        ownPids.add(p.server.pid);
        const target = { url: `${p.apiUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${p.token}` } };
        await warm(target);
        const from = Number(process.hrtime.bigint() / 1000n);
        const r = await load(target, body, settings.profileSec);
        const to = Number(process.hrtime.bigint() / 1000n);
        await p.server.stop();
        const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
        if (!file) throw new Error('no .cpuprofile was written');
        const kept = join(outDir, `r3-${id}.cpuprofile`);
        rmSync(kept, { force: true });
        try {
          renameSync(join(dir, file), kept);
        } catch {
          copyFileSync(join(dir, file), kept);
        }
        const summary = summariseProfile(kept, snapshot.dir, [from, to]);
        profiles.push({ scenario: id, file: kept.startsWith(REPO) ? kept.slice(REPO.length + 1) : kept, rps: r.rps, summary });
        log(
          `[${elapsed()}] profiled R3 (${id}) at ${Math.round(r.rps)} req/s: top ${summary.top
            .slice(0, 3)
            .map((e) => `${e.function} ${e.selfPct.toFixed(1)} %`)
            .join(', ')}`,
        );
      } catch (err) {
        profiles.push({ scenario: id, file: null, rps: 0, summary: null, error: (err as Error).message.split('\n')[0]! });
        log(`[${elapsed()}] profiling R3 (${id}) failed: ${(err as Error).message}`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  // --- R3 soak: does its RSS grow? --------------------------------------------------------------------------

  let soak: SoakResult | null = null;
  if (r3 && settings.soakSec > 0) {
    const target = targets.find((t) => t.info.id === 'R3')!;
    const body = templates.get('small') ?? bodyTemplate(SCENARIOS[0]!);
    const samples: SoakResult['samples'] = [];
    const started = performance.now();
    const sample = () => {
      const m = memoryOf(r3.server.pid);
      if (m) samples.push({ t: (performance.now() - started) / 1000, rssMiB: m.rssMiB });
    };
    sample();
    const timer = setInterval(sample, quick ? 200 : 1000);
    const r: LoadResult = await load(target, body, settings.soakSec);
    clearInterval(timer);
    sample();
    soak = soakVerdict(samples, r, settings.soakSec, memoryOf(r3.server.pid)?.peakMiB ?? Number.NaN);
    log(`[${elapsed()}] soak: ${soak.verdict}`);
  }

  let redisInfo: BenchResults['memory']['redis'];
  try {
    const client = createClient({ url: redis.url });
    await client.connect();
    const info = await client.info('memory');
    const keys = await client.dbSize();
    let jobs = 0;
    for await (const batch of client.scanIterator({ MATCH: 'pc:j:*', COUNT: 1000 })) jobs += Array.isArray(batch) ? batch.length : 1;
    await client.quit();
    redisInfo = { usedMemoryMiB: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? Number.NaN) / 1048576, keys, jobs };
  } catch {
    redisInfo = null;
  }

  // --- results --------------------------------------------------------------------------------------------

  const rows = targets.map((t) => t.info);
  const { derived, budget } = derive(
    results,
    rows.filter((r) => r.status === 'ok'),
  );
  if (targets.some((t) => t.info.id === 'R4' && t.info.status === 'ok') && scenarios.some((s) => s.stream)) {
    notes.push(
      "R4 streaming: Portkey's stream transformer waits 25 ms before it passes on the first chunk of every streamed answer (a `setTimeout(…, 25)` in its build), so its streaming latency and, with a fixed number of connections, its streaming throughput are bounded by that, not by its CPU.",
    );
  }
  if (targets.some((t) => t.info.id === 'R4')) {
    notes.push(
      'R4 runs through bench/harness/portkey.ts, which gives upstream responses mutable headers: without it every streamed call fails with `TypeError: immutable` under the @hono/node-server that npm installs for it (Portkey-AI/gateway#1389, #1550).',
    );
  }
  notes.push(
    "Fixed-rate runs are paced by the bench (evenly spaced sends over autocannon's connections), not by autocannon's own rate options, which send in a burst at the start of every second.",
    "R3 streams by emulation: it asks the upstream for a non-streaming answer and writes the SSE itself; the other rows pass the mock's SSE through.",
  );
  if (pin.enabled) notes.push('R0 shares core 0 with the mock, as every row does: where R1 comes close to R0 the harness, not the proxy, is the limit.');
  const results_: BenchResults = {
    schema: 'portcullis-bench/1',
    mode: quick ? 'quick' : 'full',
    startedAt: new Date(t0).toISOString(),
    finishedAt: new Date().toISOString(),
    elapsedSec: (Date.now() - t0) / 1000,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      node: process.versions.node,
      ...(serverNode ? { serverNode: { version: serverNode.version.replace(/^v/, ''), how: serverNode.how } } : {}),
      platform: `${process.platform} ${process.arch}`,
      pinning: pin,
    },
    gateway: { source: snapshot.source, note: snapshot.note, store: 'redis (test/helpers/redis-server.ts settings: appendonly, appendfsync always)' },
    settings,
    rows,
    scenarios: results,
    derived,
    budget,
    profiles,
    workers,
    ...(redisRoundTrips ? { redisRoundTrips } : {}),
    durability,
    guardScan,
    guardIntent,
    contention: { threshold: CONTENDED, ...contention, contended: contendedCells(results) },
    memory: { r3PeakRssMiB: r3Peak === null ? null : Math.max(r3Peak, soak?.peakMiB ?? 0), soak, redis: redisInfo },
    notes,
  };
  writeResults(outDir, results_);
  log(`[${elapsed()}] wrote ${join(outDir, 'latest.json')} and latest.md`);
  if (!quick && !args['no-readme'] && !args.out) {
    updateReadme(join(REPO, 'bench', 'README.md'), results_);
    log(`[${elapsed()}] updated the README's Performance section`);
  }
  for (const b of budget) {
    log(
      `budget ${b.scenario.padEnd(12)} R3 ${b.throughputRatio.toFixed(2)}× R1, p50 added @50 % ${b.p50AddedMsAt50.toFixed(2)} ms: ${b.floor ? 'met' : 'MISSED'} (aim ${b.aim ? 'met' : 'missed'})`,
    );
  }
}

/** Measurements still contended after their retry: `scenario row what`. */
function contendedCells(results: ScenarioResults[]): string[] {
  const out: string[] = [];
  for (const s of results) {
    for (const [row, r] of Object.entries(s.saturation)) if (r && lost(r) > CONTENDED) out.push(`${s.id} ${row} saturation`);
    for (const at of s.rates)
      for (const [row, r] of Object.entries(at.results)) if (r && lost(r) > CONTENDED) out.push(`${s.id} ${row} @${at.fraction * 100} %`);
  }
  return out;
}

function soakVerdict(samples: SoakResult['samples'], r: LoadResult, durationSec: number, peakMiB: number): SoakResult {
  const rss = samples.map((s) => s.rssMiB);
  const half = samples.filter((s) => s.t >= durationSec / 2);
  const n = half.length;
  const mx = half.reduce((a, s) => a + s.t, 0) / Math.max(1, n);
  const my = half.reduce((a, s) => a + s.rssMiB, 0) / Math.max(1, n);
  const sxy = half.reduce((a, s) => a + (s.t - mx) * (s.rssMiB - my), 0);
  const sxx = half.reduce((a, s) => a + (s.t - mx) ** 2, 0);
  const slopeMiBPerMin = sxx > 0 ? (sxy / sxx) * 60 : 0;
  const startMiB = rss[0] ?? Number.NaN;
  const endMiB = rss[rss.length - 1] ?? Number.NaN;
  // "Grows": the floor rises. Under load RSS is a sawtooth — the heap fills, a major GC gives memory back —
  // so any one sample, and a line through them, swings by tens of MiB; what a leak moves is the level GC
  // brings it back to. So: the lowest RSS of the last quarter against that of the third quarter, grown by
  // more than 5 % and 2 MiB, with the second half's trend rising too. A level that settles after the load
  // starts (heap sizing, JIT) is not growth.
  const floor = (from: number, to: number) =>
    Math.min(...samples.filter((s) => s.t >= from * durationSec && s.t < to * durationSec + 1e-9).map((s) => s.rssMiB));
  const third = floor(0.5, 0.75);
  const last = floor(0.75, 1);
  const floorRise = last - third;
  const grows = durationSec >= 20 && slopeMiBPerMin > 2 && floorRise > 2 && floorRise > 0.05 * third;
  const secondHalf = samples.filter((s) => s.t >= durationSec / 2).map((s) => s.rssMiB);
  const level = `${Math.min(...secondHalf).toFixed(0)}–${Math.max(...secondHalf).toFixed(0)} MiB`;
  const rise = `${floorRise >= 0 ? '+' : ''}${floorRise.toFixed(1)} MiB, ${((100 * floorRise) / third).toFixed(1)} %`;
  const verdict =
    durationSec < 20
      ? `too short (${durationSec} s) to tell whether RSS grows`
      : grows
        ? `RSS grows: its floor (the lowest RSS, after a GC) rose ${rise} from the third quarter of the soak to the last (${slopeMiBPerMin.toFixed(1)} MiB/min over the second half), ${startMiB.toFixed(0)} -> ${endMiB.toFixed(0)} MiB`
        : `RSS does not grow beyond noise: ${level} over the second half, its floor (the lowest RSS, after a GC) ${rise} from the third quarter to the last (threshold 5 % and 2 MiB)`;
  return {
    durationSec,
    rps: r.rps,
    errors: r.errors,
    samples,
    startMiB,
    endMiB,
    minMiB: Math.min(...rss),
    maxMiB: Math.max(...rss),
    peakMiB,
    slopeMiBPerMin,
    grows,
    verdict,
  };
}

if (args.rewrite) {
  const { readFileSync } = await import('node:fs');
  const saved = JSON.parse(readFileSync(join(outDir, 'latest.json'), 'utf8')) as BenchResults;
  // The soak's verdict is derived from its samples: derive it again, with the rule as it is now.
  const soak = saved.memory.soak;
  if (soak) saved.memory.soak = soakVerdict(soak.samples, { rps: soak.rps, errors: soak.errors } as LoadResult, soak.durationSec, soak.peakMiB);
  writeResults(outDir, saved);
  if (!args['no-readme'] && !args.out && saved.mode === 'full') updateReadme(join(REPO, 'bench', 'README.md'), saved);
  log(`rewrote ${join(outDir, 'latest.md')}${!args['no-readme'] && !args.out && saved.mode === 'full' ? ' and the README' : ''} from latest.json`);
  process.exit(0);
}

// Ctrl-C or a SIGTERM mid-run still stops every process the bench started.
// (`on`, not `once`: the redis-server helper re-raises the signal when it sees no other listener left.)
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`bench: ${signal}, stopping\n`);
    void cleanup().finally(() => process.exit(130));
  });
}

try {
  await main();
  await cleanup();
  process.exit(0);
} catch (err) {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  await cleanup();
  process.exit(1);
}
