/**
 * Where R3's p99 at half its own maximum comes from. `npm run bench` reports the median over pairs of
 * 3-second windows (bench/harness/half-load.ts); this repeats such windows (the same rows, pinning,
 * connections and pacing as the bench's durability step: a fresh Redis on `appendfsync everysec`, a fresh
 * gateway, the bench's warm-up, 4 s at saturation, R0 at half of that, R1 twice, then R3 at it) several
 * times, and records beside every answer what could have held it up:
 *
 * - in the gateway, the mock and this process (the load generator): each garbage collection and each time
 *   the event loop ran late by more than 4 ms (bench/harness/tail-monitor.mjs, preloaded; this process
 *   records its own);
 * - in Redis, every 100 ms: a PING's round trip, forks (AOF rewrites), `aof_delayed_fsync`, and whether a
 *   rewrite is in progress.
 *
 * It then groups the slow answers (over 3× the window's p50 and 10 ms) into episodes and prints, for each,
 * what overlapped it, and each window's p99 with and without them.
 *
 *   npx tsx bench/tail.ts [--windows 6] [--seconds 3] [--appendfsync everysec|always] [--node auto|current|22|24]
 *                         [--no-pin] [--gateway auto|worktree|head] [--fill-mib N] [--rewrite-at W,...]
 *                         [--warmup SEC] [--rate N] [--skip-r1] [--node-flag FLAG ...] [--size small|large]
 *
 * Each round is R0, R1 twice (the bare forwarder on the gateway's core: two identical windows, the method's own
 * noise) and R3, all at one rate; each line gives R3's CPU per call (its process's ticks over the window) and
 * every p99 timed from the write and from the scheduled slot (load.ts). The gateway first gets the bench's
 * warm-up (bench/harness/warmup.ts); `--warmup SEC` sets its small part, `--warmup 0` skips it, and with `--rate`
 * (no saturation window to find the rate) the first window is then the gateway's first load: the sequence shows
 * when its path settles. `--node-flag` passes a flag to the gateway's Node (e.g. --max-semi-space-size=16).
 *
 * `--size large` loads every window with the bench's 100 KB calls instead of its small ones (the warm-up stays the
 * bench's). With `--node-flag=--trace-gc-nvp` the gateway's own line for each collection is kept in a file, R3's
 * windows marked in it, and each window's scavenges, bytes promoted out of those allocated and full collections
 * (with their pauses) are printed: what fills the old generation while the p99 is read.
 *
 * `--fill-mib N` first writes N MiB of filler keys (what `npm run bench` has put in its Redis by the time it
 * measures: about 5.8 KiB a call); `--rewrite-at W[,W...]` starts an AOF rewrite (BGREWRITEAOF, what Redis starts by
 * itself each time the AOF doubles: auto-aof-rewrite-percentage 100, min-size 64 MiB) as each window W begins:
 * a controlled before/after of what a rewrite does to the tail.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, constants, performance, type PerformanceEntry } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createClient } from 'redis';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { bodyTemplate } from './harness/bodies.js';
import { runLoad, summarise } from './harness/load.js';
import { pinSelf, startServer } from './harness/processes.js';
import { buildSnapshot, REPO, startPortcullis, type SourceChoice } from './harness/portcullis.js';
import { chooseNode } from './harness/node-runtime.js';
import { processTicks, HZ } from './harness/cpu-usage.js';
import { FULL_WARMUP, warmUp } from './harness/warmup.js';

const { values: args } = parseArgs({
  options: {
    windows: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '3' },
    appendfsync: { type: 'string', default: 'everysec' },
    node: { type: 'string', default: 'auto' },
    'no-pin': { type: 'boolean', default: false },
    gateway: { type: 'string', default: 'auto' },
    connections: { type: 'string', default: '32' },
    'fill-mib': { type: 'string', default: '0' },
    'rewrite-at': { type: 'string', default: '0' },
    warmup: { type: 'string' },
    rate: { type: 'string' },
    'skip-r1': { type: 'boolean', default: false },
    'node-flag': { type: 'string', multiple: true, default: [] },
    size: { type: 'string', default: 'small' },
  },
});
const log = (s: string) => process.stdout.write(`${s}\n`);
const pin = pinSelf(!args['no-pin']);
const harnessPin = { ...pin, enabled: false };
const node = chooseNode(REPO, args.node);
const monitorDir = mkdtempSync(join(tmpdir(), 'portcullis-tail-'));
process.env['TAIL_MONITOR_DIR'] = monitorDir;
const monitor = join(REPO, 'bench/harness/tail-monitor.mjs');

interface Event {
  t: 'gc' | 'late' | 'eld';
  kind?: string;
  at: number;
  ms: number;
  who: string;
  /** `eld` (tail-monitor.mjs): the event loop's delay over `span` ms from `at`, p99 and max, ms. */
  span?: number;
  p99?: number;
  max?: number;
}
const own: Event[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    own.push({
      t: 'gc',
      kind: kind === constants.NODE_PERFORMANCE_GC_MAJOR ? 'major' : kind === constants.NODE_PERFORMANCE_GC_MINOR ? 'minor' : String(kind),
      at: performance.timeOrigin + e.startTime,
      ms: e.duration,
      who: 'harness',
    });
  }
}).observe({ entryTypes: ['gc'] });
let last = performance.now();
const lateTimer = setInterval(() => {
  const now = performance.now();
  if (now - last - 2 > 4) own.push({ t: 'late', at: performance.timeOrigin + last + 2, ms: now - last - 2, who: 'harness' });
  last = now;
}, 2);

const mock = await startServer({
  name: 'mock upstream',
  args: ['--import', monitor, '--import', 'tsx', join(REPO, 'bench/harness/mock-upstream.ts')],
  pin: harnessPin,
  ready: /listening (\d+)/,
});
const redis = await startRedisServer();
const rc = createClient({ url: redis.url });
await rc.connect();
if (args.appendfsync !== 'always') await rc.configSet('appendfsync', args.appendfsync);
for (let done = 0, i = 0; done < Number(args['fill-mib']) * 1048576;) {
  const batch = rc.multi();
  for (let j = 0; j < 500; j++, i++) batch.set(`filler:${i}`, 'x'.repeat(4000));
  await batch.execAsPipeline();
  done += 500 * 4000;
}
const snapshot = await buildSnapshot(args.gateway as SourceChoice, log);
const spawnedAt = performance.timeOrigin + performance.now();
const gw = await startPortcullis({
  snapshot,
  mockBaseUrl: `http://127.0.0.1:${mock.port}/v1`,
  redisUrl: redis.url,
  pin,
  node: node.path,
  nodeFlags: ['--import', monitor, ...args['node-flag']],
  name: 'R3 portcullis (tail)',
});
// With --trace-gc (or -nvp) among the gateway's flags, V8's own lines for each collection (the young
// generation's capacity, what was promoted, why a full collection came), kept apart in a file of their own,
// each with the time since the gateway's isolate started.
const gcTrace: string[] = [];
if (args['node-flag'].some((f) => f.startsWith('--trace-gc') || f.startsWith('--trace-memory-reducer'))) {
  gw.server.child.stdout!.on('data', (c: Buffer) =>
    gcTrace.push(
      ...c
        .toString()
        .split('\n')
        .filter((l) => /Mark-Compact|Scavenge|Mark-sweep|pause=|Memory reducer/i.test(l)),
    ),
  );
}
const who = (pid: number) => (pid === gw.server.pid ? 'gateway' : pid === mock.pid ? 'mock' : `pid ${pid}`);
log(
  `gateway ${snapshot.source} on Node ${node.version}${args['node-flag'].length ? ` (${args['node-flag'].join(' ')})` : ''}; ${pin.how}; appendfsync ${args.appendfsync}`,
);

interface RedisSample {
  at: number;
  pingMs: number;
  forks: number;
  forkUs: number;
  rewriting: boolean;
  delayedFsync: number;
  aofMiB: number;
}
const redisSamples: RedisSample[] = [];
const num = (info: string, key: string) => Number(new RegExp(`^${key}:(\\S+)`, 'm').exec(info)?.[1] ?? Number.NaN);
let polling = true;
const poller = (async () => {
  while (polling) {
    const t0 = performance.now();
    await rc.ping();
    const pingMs = performance.now() - t0;
    const info = await rc.info();
    redisSamples.push({
      at: performance.timeOrigin + t0,
      pingMs,
      forks: num(info, 'total_forks'),
      forkUs: num(info, 'latest_fork_usec'),
      rewriting: num(info, 'aof_rewrite_in_progress') === 1,
      delayedFsync: num(info, 'aof_delayed_fsync'),
      aofMiB: num(info, 'aof_current_size') / 1048576,
    });
    await new Promise((r) => setTimeout(r, 100));
  }
})();

/** The windows at whose start an AOF rewrite is started (`--rewrite-at 2,4,6`). */
const rewriteAt = new Set(args['rewrite-at'].split(',').map(Number));
const body = bodyTemplate({ size: args.size === 'large' ? 'large' : 'small', stream: false });
const connections = Number(args.connections);
const r3 = { url: `${gw.apiUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${gw.token}` }, body, connections };
const r0 = { url: `http://127.0.0.1:${mock.port}/v1/chat/completions`, headers: {}, body, connections };
// R1, the bare forwarder, on the gateway's core: two identical R1 windows a round give the method's own
// noise in p99 (the same row, the same rate, moments apart), beside R0's.
const r1Server = !args['skip-r1']
  ? await startServer({
      name: 'R1 bare node:http + undici',
      command: node.path,
      args: ['--import', 'tsx', join(REPO, 'bench/harness/bare-proxy.ts')],
      env: { UPSTREAM: `http://127.0.0.1:${mock.port}/v1`, PORT: '0' },
      pin,
      ready: /listening (\d+)/,
    })
  : null;
const r1 = r1Server ? { url: `http://127.0.0.1:${r1Server.port}/v1/chat/completions`, headers: {}, body, connections } : null;
const seconds = Number(args.seconds);
/** CPU ms per answer of `pid` over `run`. */
async function withCpu<T extends { ok: number }>(pid: number, run: () => Promise<T>): Promise<T & { cpuMsPerReq: number }> {
  const t0 = processTicks(pid);
  const r = await run();
  return { ...r, cpuMsPerReq: r.ok > 0 ? ((processTicks(pid) - t0) * (1000 / HZ)) / r.ok : Number.NaN };
}
const loadAvg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
interface Win {
  row: 'R0' | 'R1a' | 'R1b' | 'R3';
  round: number;
  p50: number;
  p99: number;
  p99Intended: number;
  n: number;
  cpuMsPerReq: number;
  load: string;
}
const all: Win[] = [];
const record = (row: Win['row'], round: number, r: Awaited<ReturnType<typeof runLoad>> & { cpuMsPerReq?: number }) => {
  const w: Win = {
    row,
    round,
    p50: r.latency.p50,
    p99: r.latency.p99,
    p99Intended: r.fromIntended?.p99 ?? Number.NaN,
    n: r.ok,
    cpuMsPerReq: r.cpuMsPerReq ?? Number.NaN,
    load: loadAvg(),
  };
  all.push(w);
  return w;
};
try {
  const started = performance.now();
  const warmSmall = args.warmup === undefined ? FULL_WARMUP.smallSec : Number(args.warmup);
  if (warmSmall > 0)
    await warmUp(
      (b, sec) => runLoad({ ...r3, body: b, durationSec: sec, minAnswers: 1 }),
      { small: body, large: bodyTemplate({ size: 'large', stream: false }) },
      {
        ...FULL_WARMUP,
        smallSec: warmSmall,
      },
    );
  if (warmSmall > 0 && r1) await runLoad({ ...r1, durationSec: 2 });
  let rate = Number(args.rate ?? 0);
  if (!rate) {
    const sat = await runLoad({ ...r3, durationSec: 4, minAnswers: 1 });
    rate = Math.max(1, Math.round(sat.rps / 2));
    log(`saturation ${Math.round(sat.rps)} req/s (load average ${loadAvg()})`);
  }
  log(
    `warm-up: ${warmSmall > 0 ? `${FULL_WARMUP.largeSec} s of 100 KB calls, ${warmSmall} s of small` : 'none (a cold gateway)'}; windows of ${seconds} s at ${rate} req/s, ${connections} connections`,
  );
  const windows: Array<{ from: number; to: number; answers: Array<[number, number]>; r0p50: number; r0p99: number }> = [];
  const fmt2 = (x: number) => x.toFixed(2);
  for (let i = 0; i < Number(args.windows); i++) {
    const a = await runLoad({ ...r0, durationSec: seconds, rate });
    const w0 = record('R0', i + 1, a);
    let r1line = '';
    if (r1 && r1Server) {
      const x = record('R1a', i + 1, await withCpu(r1Server.pid, () => runLoad({ ...r1, durationSec: seconds, rate })));
      const y = record('R1b', i + 1, await withCpu(r1Server.pid, () => runLoad({ ...r1, durationSec: seconds, rate })));
      r1line = ` R1 p99 ${fmt2(x.p99)} / ${fmt2(y.p99)} (from the slot ${fmt2(x.p99Intended)} / ${fmt2(y.p99Intended)});`;
    }
    const answers: Array<[number, number]> = [];
    if (rewriteAt.has(i + 1)) await rc.bgRewriteAof();
    const from = performance.timeOrigin + performance.now();
    const since = (performance.now() - started) / 1000;
    const b = await withCpu(gw.server.pid, () => runLoad({ ...r3, durationSec: seconds, rate, onAnswer: (at, ms) => answers.push([at, ms]) }));
    const w3 = record('R3', i + 1, b);
    windows.push({ from, to: performance.timeOrigin + performance.now(), answers, r0p50: a.latency.p50, r0p99: a.latency.p99 });
    // In the gateway's clock of the trace lines (ms since it was spawned, within its start-up's few ms).
    gcTrace.push(`# R3 window ${i + 1}: ${(from - spawnedAt).toFixed(0)} to ${(windows.at(-1)!.to - spawnedAt).toFixed(0)} ms`);
    log(
      `round ${i + 1} (at ${since.toFixed(0)} s, R3 under load for ${(i * seconds + (warmSmall > 0 ? FULL_WARMUP.largeSec + warmSmall : 0) + (args.rate ? 0 : 4)).toFixed(0)} s before it; load average ${w3.load}): R0 p99 ${fmt2(w0.p99)} (slot ${fmt2(w0.p99Intended)});${r1line} ` +
        `R3 ${w3.n} answers, CPU ${w3.cpuMsPerReq.toFixed(3)} ms/call, p50 ${fmt2(w3.p50)} p99 ${fmt2(w3.p99)} (slot ${fmt2(w3.p99Intended)}), added p99 ${fmt2(w3.p99 - w0.p99)} ms`,
    );
  }
  polling = false;
  await poller;
  await gw.server.stop();
  await r1Server?.stop();
  await mock.stop();
  clearInterval(lateTimer);

  // The method's figures: per row, the median of its windows' p99s and their spread; R1 against itself.
  const median = (xs: number[]) => {
    const s = xs.filter(Number.isFinite).sort((x, y) => x - y);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : Number.NaN;
  };
  for (const row of ['R0', 'R1a', 'R1b', 'R3'] as const) {
    const ws = all.filter((w) => w.row === row);
    if (!ws.length) continue;
    const p99s = ws.map((w) => w.p99);
    log(
      `${row.padEnd(3)} p99 per window ${p99s.map(fmt2).join(' ')}; median ${fmt2(median(p99s))} (from the slot ${fmt2(median(ws.map((w) => w.p99Intended)))}), ` +
        `${ws[0]!.n}-${ws.at(-1)!.n} answers a window; CPU ms/call ${ws.map((w) => w.cpuMsPerReq.toFixed(3)).join(' ')}`,
    );
  }
  const pairs = (a: Win['row'], b: Win['row'], key: 'p99' | 'p99Intended' = 'p99') =>
    all.filter((w) => w.row === a).map((w) => (all.find((x) => x.row === b && x.round === w.round)?.[key] ?? Number.NaN) - w[key]);
  if (r1) {
    const d = pairs('R1a', 'R1b');
    log(`R1 against itself, p99(second) - p99(first) per round: ${d.map(fmt2).join(' ')}; median |difference| ${fmt2(median(d.map(Math.abs)))} ms`);
  }
  const added = pairs('R0', 'R3');
  log(
    `R3 p99 added over R0 per round: ${added.map(fmt2).join(' ')}; median ${fmt2(median(added))} ms; from the slot: ${fmt2(median(pairs('R0', 'R3', 'p99Intended')))} ms`,
  );
  if (r1) log(`R3 p99 added over R1 (first) per round: median ${fmt2(median(pairs('R1a', 'R3')))} ms`);

  const events: Event[] = [...own];
  for (const f of readdirSync(monitorDir)) {
    const pid = Number(f.replace('.jsonl', ''));
    for (const line of readFileSync(join(monitorDir, f), 'utf8').split('\n'))
      if (line) events.push({ ...(JSON.parse(line) as Omit<Event, 'who'>), who: who(pid) });
  }
  const describe = (e: Event) => `${e.who} ${e.t === 'gc' ? `GC ${e.kind}` : 'loop late'} ${e.ms.toFixed(1)} ms`;
  const fmt = fmt2;
  for (const [i, w] of windows.entries()) {
    const lat = Float64Array.from(w.answers.map((a) => a[1]));
    const p = summarise(lat);
    const slowOver = Math.max(10, 3 * p.p50);
    // Episodes: slow answers whose completions lie within 100 ms of each other.
    const slow = w.answers.filter((a) => a[1] > slowOver).sort((a, b) => a[0] - b[0]);
    const episodes: Array<{ from: number; to: number; n: number; max: number }> = [];
    for (const [at, ms] of slow) {
      const e = episodes.at(-1);
      if (e && at - e.to < 100) {
        e.to = at;
        e.n++;
        e.max = Math.max(e.max, ms);
      } else episodes.push({ from: at - ms, to: at, n: 1, max: ms });
    }
    const inEpisode = (a: [number, number]) => episodes.some((e) => a[0] >= e.from && a[0] <= e.to + 1);
    const rest = summarise(Float64Array.from(w.answers.filter((a) => !inEpisode(a)).map((a) => a[1])));
    const rs = redisSamples.filter((s) => s.at >= w.from - 200 && s.at <= w.to);
    // Who stalled during the window: each process's longest late event loop and the gateway's collections.
    const inWindow = events.filter((x) => x.t !== 'eld' && x.at + x.ms >= w.from && x.at <= w.to);
    const slices = events.filter((x) => x.t === 'eld' && x.who === 'gateway' && x.at >= w.from - 250 && x.at + x.span! <= w.to + 250);
    const sliceP99 = slices.map((x) => x.p99!).sort((a, b) => a - b);
    const eldLine = sliceP99.length
      ? `gateway event-loop delay p99 per half second: median ${fmt(sliceP99[Math.floor((sliceP99.length - 1) / 2)]!)}, max ${fmt(sliceP99.at(-1)!)} ms (longest ${fmt(Math.max(...slices.map((x) => x.max!)))})`
      : 'no event-loop histogram';
    const lateMax = (who: string) => Math.max(0, ...inWindow.filter((x) => x.who === who && x.t === 'late').map((x) => x.ms));
    const gcs = inWindow.filter((x) => x.who === 'gateway' && x.t === 'gc');
    const gcBy = (kind: string) => gcs.filter((x) => x.kind === kind);
    const gcLine = ['minor', 'major', 'incremental']
      .map((k) => `${k} ${gcBy(k).length} (${fmt(gcBy(k).reduce((a, x) => a + x.ms, 0))} ms, max ${fmt(Math.max(0, ...gcBy(k).map((x) => x.ms)))})`)
      .join(', ');
    const forks = rs.length ? rs.at(-1)!.forks - rs[0]!.forks : 0;
    const rewriteMs = rs.filter((s) => s.rewriting).length * 100;
    log(
      `window ${i + 1}: ${w.answers.length} answers, p50 ${fmt(p.p50)} p99 ${fmt(p.p99)} max ${fmt(p.max)} ms (R0 p50 ${fmt(w.r0p50)}, p99 ${fmt(w.r0p99)}); ` +
        `${episodes.length} slow episode(s); without them p99 ${fmt(rest.p99)} ms; event loop late at most: gateway ${fmt(lateMax('gateway'))}, harness ${fmt(lateMax('harness'))}, mock ${fmt(lateMax('mock'))} ms; gateway GC ${gcLine}; ${eldLine}; Redis: ${forks} fork(s)${rewriteMs ? `, rewriting for ~${rewriteMs} ms` : ''}, ping max ${fmt(Math.max(0, ...rs.map((s) => s.pingMs)))} ms, AOF ${fmt(rs.at(-1)?.aofMiB ?? 0)} MiB`,
    );
    for (const e of episodes) {
      const near = events.filter((x) => x.at + x.ms >= e.from - 20 && x.at <= e.to).filter((x) => x.t === 'late' || x.kind === 'major' || x.ms >= 2);
      const redisNear = rs.filter((s) => s.at >= e.from - 100 && s.at <= e.to);
      const rewriting = redisNear.some((s) => s.rewriting);
      log(
        `  ${new Date(e.from).toISOString().slice(11, 23)} +${(e.to - e.from).toFixed(0)} ms: ${e.n} answers over ${fmt(slowOver)} ms (max ${fmt(e.max)}); ` +
          `${near.map(describe).join(', ') || 'no GC or late loop in any process'}; Redis ping max ${fmt(Math.max(0, ...redisNear.map((s) => s.pingMs)))} ms${rewriting ? ', AOF rewrite in progress' : ''}`,
      );
    }
  }
  const majors = events.filter((e) => e.t === 'gc' && e.kind === 'major');
  log(`major GCs over the windows: ${majors.map((e) => `${e.who} ${e.ms.toFixed(1)} ms`).join(', ') || 'none'}`);
  const last = redisSamples.at(-1);
  if (last)
    log(
      `Redis at the end: ${last.forks} forks (last ${(last.forkUs / 1000).toFixed(1)} ms), aof_delayed_fsync ${last.delayedFsync}, AOF ${fmt(last.aofMiB)} MiB`,
    );
} finally {
  polling = false;
  if (gcTrace.length) {
    const file = join(tmpdir(), `portcullis-tail-gc-${gw.server.pid}.log`);
    writeFileSync(file, `${gcTrace.join('\n')}\n`);
    log(`the gateway's --trace-gc lines, with R3's windows marked: ${file}`);
    for (const l of promotionByWindow(gcTrace)) log(`  ${l}`);
  }
  await gw.server.stop();
  await r1Server?.stop();
  snapshot.remove();
  await mock.stop();
  await rc.quit().catch(() => undefined);
  await redis.stop();
  rmSync(monitorDir, { recursive: true, force: true });
  clearInterval(lateTimer);
}

/**
 * With --trace-gc-nvp: for each R3 window, the scavenges, what they promoted out of what was allocated, and the
 * full collections with their pauses: what fills the old generation in the windows the p99 is read from.
 */
function promotionByWindow(lines: readonly string[]): string[] {
  const out: string[] = [];
  const events: Array<{ at: number; f: Record<string, string> }> = [];
  const windows: Array<{ n: number; from: number; to: number }> = [];
  for (const l of lines) {
    const w = /^# R3 window (\d+): (\d+) to (\d+)/.exec(l);
    if (w) windows.push({ n: Number(w[1]), from: Number(w[2]), to: Number(w[3]) });
    const e = /\s(\d+) ms: (pause=.*)/.exec(l);
    if (e) events.push({ at: Number(e[1]), f: Object.fromEntries(e[2]!.split(/\s+/).map((kv) => kv.split('=') as [string, string])) });
  }
  if (events.length === 0) return out;
  const mib = (b: number) => (b / 2 ** 20).toFixed(2);
  const sum = { promoted: 0, allocated: 0, full: 0, over10: 0 };
  for (const w of windows) {
    const inside = events.filter((e) => e.at >= w.from && e.at <= w.to);
    const scavenges = inside.filter((e) => e.f['gc'] === 's');
    const full = inside.filter((e) => e.f['gc'] === 'mc');
    const promoted = scavenges.reduce((a, e) => a + Number(e.f['promoted'] ?? 0), 0);
    const allocated = scavenges.reduce((a, e) => a + Number(e.f['allocated'] ?? 0), 0);
    sum.promoted += promoted;
    sum.allocated += allocated;
    sum.full += full.length;
    sum.over10 += full.filter((e) => Number(e.f['pause']) > 10).length;
    out.push(
      `R3 window ${w.n}: ${scavenges.length} scavenges, promoted ${mib(promoted)} of ${mib(allocated)} MiB allocated; ${full.length} full collection(s)${full.length ? ` (pauses ${full.map((e) => e.f['pause']).join(', ')} ms)` : ''}`,
    );
  }
  out.push(
    `R3's windows in all: promoted ${mib(sum.promoted)} of ${mib(sum.allocated)} MiB (${sum.allocated ? ((100 * sum.promoted) / sum.allocated).toFixed(1) : '0'} %), ${sum.full} full collections, ${sum.over10} of them pausing over 10 ms`,
  );
  return out;
}
