/**
 * R3's memory under load, in a minute or two instead of the full bench's nine (RSS after a 60 s
 * soak at saturation <= 150 MiB, flat). Starts the built gateway (`dist/main.js`, every host in one process,
 * as bench/run.ts runs it) on a real redis-server against the instant mock, loads it with small
 * non-streaming calls at saturation, samples its RSS every second and prints start / floor of the last
 * quarter / max / end and the peak (VmHWM), the soak's figures.
 *
 *   npx tsx bench/memory.ts [--seconds 60] [--connections 32] [--gateway auto|worktree|head] [--compare]
 *                           [--snapshot] [--node-flags=--trace-gc] [--before 20] [--after-env 'K=V ...']
 *                           [--rate N]
 *
 * Idle and after the load it also prints what the RSS is made of: the `node` binary's mapped code, V8's heap by
 * space (from the gateway's own /metrics: new space is the young generation, old space what survives), and the
 * rest of the anonymous memory (malloc arenas, WebAssembly memories, buffers), and the gateway's malloc_trim
 * calls so far (src/malloc-trim.ts: how many, their time) and what it dropped of the executable's pages once it
 * served (src/start-pages.ts; the `node binary` figure is what is resident of it now). With the CPU per call of the soak (and of the
 * 100 KB calls) it prints the minor page faults per call: what memory given back costs when it is touched again.
 *
 * `--rate N` soaks at N calls a second instead of at saturation, and prints the soak's latency (p50, p90, p99): with
 * `--node-flags=--trace-gc` it also sums the main thread's GC pauses of the soak by kind (count, median, p99, max,
 * sum) and writes every --trace-gc line to a file, to set the collector's pauses against the latency; with
 * `--node-flags=--trace-gc-nvp` also what the young generation promoted (what brings each full collection) and each
 * full collection's pause by phase and its marking on V8's helper threads.
 *
 * `--before SEC` first loads it with 100 KB calls (half the time streaming), as the full bench does before its
 * soak: their scans grow the scanner's WebAssembly memory and the heap, which the soak alone never shows.
 *
 * `--compare` soaks HEAD and then the working tree, one after the other (memory, unlike CPU, hardly moves
 * with what else runs on the machine); `--after-env` gives the second more environment (with a clean tree: the
 * same code with and without a setting, e.g. `--after-env 'LD_PRELOAD=libjemalloc.so.2'`). `--snapshot` writes a V8 heap snapshot of the idle gateway before the
 * load and another after it (--heapsnapshot-signal) and prints what holds the heap: self size by
 * constructor / kind, the largest first.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { bodyTemplate } from './harness/bodies.js';
import { runLoad } from './harness/load.js';
import { memoryOf, startServer } from './harness/processes.js';
import { HZ, processTicks } from './harness/cpu-usage.js';
import { ADMIN_TOKEN, buildSnapshot, parseEnv, REPO, startPortcullis, type SourceChoice } from './harness/portcullis.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '32' },
    gateway: { type: 'string', default: 'auto' },
    compare: { type: 'boolean', default: false },
    snapshot: { type: 'boolean', default: false },
    'node-flags': { type: 'string', default: '' },
    before: { type: 'string', default: '0' },
    'after-env': { type: 'string', default: '' },
    rate: { type: 'string' },
  },
});
const noPin = { enabled: false, harnessCore: null, serverCore: null, how: 'not pinned' };
const log = (s: string) => process.stdout.write(`${s}\n`);
const mib = (n: number) => `${n.toFixed(1)} MiB`;

/** Self size by constructor (objects, closures) or by kind (strings, code, arrays...), largest first. */
function heapSummary(file: string, top = 15): string[] {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [ti, ni, si] = [fields.indexOf('type'), fields.indexOf('name'), fields.indexOf('self_size')];
  const by = new Map<string, { size: number; count: number }>();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + ti]!]!;
    const size = snap.nodes[i + si]!;
    const key = type === 'object' || type === 'closure' ? `${type} ${snap.strings[snap.nodes[i + ni]!]!.slice(0, 60)}` : `(${type})`;
    const e = by.get(key) ?? { size: 0, count: 0 };
    e.size += size;
    e.count++;
    by.set(key, e);
    total += size;
  }
  const rows = [...by].sort((a, b) => b[1].size - a[1].size).slice(0, top);
  return [`heap ${mib(total / 2 ** 20)} in all`, ...rows.map(([k, e]) => `  ${mib(e.size / 2 ** 20).padStart(10)}  ${String(e.count).padStart(8)} × ${k}`)];
}

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  name: string;
  rssKiB: number;
}

function mappings(pid: number): Mapping[] {
  const out: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) out.push({ start: BigInt(`0x${m[1]!}`), end: BigInt(`0x${m[2]!}`), perms: m[3]!, name: m[4]! || '[anonymous]', rssKiB: 0 });
    else if (line.startsWith('Rss:')) out.at(-1)!.rssKiB = Number(line.split(/\s+/)[1]);
  }
  return out;
}

const GiB = 2n ** 30n;
const MiB = 2n ** 20n;

/**
 * The anonymous memory by what reserved it, told apart by the shape of the reservation: a WebAssembly memory
 * is an accessible mapping at the start of a reservation of several GiB (V8's guard regions: the scanner's
 * and each policy bundle's), a glibc malloc arena one of 64 MiB (`[heap]` is the main arena), a thread's
 * stack 8 MiB behind a guard page; the rest is V8's heap and code, and what Node and the addons map.
 */
function anonymousByKind(maps: Mapping[]): { wasm: number[]; mainArena: number; arenas: number; stacks: number; other: number } {
  const r = { wasm: [] as number[], mainArena: 0, arenas: 0, stacks: 0, other: 0 };
  for (let i = 0; i < maps.length; i++) {
    const m = maps[i]!;
    if (m.name === '[heap]') {
      r.mainArena += m.rssKiB / 1024;
      continue;
    }
    if (m.name !== '[anonymous]' || m.rssKiB === 0) continue;
    // The reservation: this mapping and the inaccessible anonymous ones right after it.
    let end = m.end;
    for (let j = i + 1; j < maps.length && maps[j]!.start === end && maps[j]!.name === '[anonymous]' && maps[j]!.perms.startsWith('---'); j++)
      end = maps[j]!.end;
    const size = end - m.start;
    const guardBefore = i > 0 && maps[i - 1]!.end === m.start && maps[i - 1]!.perms.startsWith('---') && maps[i - 1]!.end - maps[i - 1]!.start <= 64n * 1024n;
    if (size >= 4n * GiB) r.wasm.push(m.rssKiB / 1024);
    else if (size === 64n * MiB || (size < 64n * MiB && m.start % (64n * MiB) === 0n && end % (64n * MiB) === 0n)) r.arenas += m.rssKiB / 1024;
    else if (guardBefore && m.end - m.start >= 1n * MiB && m.end - m.start <= 8n * MiB + 64n * 1024n) r.stacks += m.rssKiB / 1024;
    else r.other += m.rssKiB / 1024;
  }
  return r;
}

/** RSS by what holds it: /proc/<pid>/smaps by mapping, and V8's heap spaces from the gateway's /metrics. */
async function breakdown(pid: number, adminUrl: string): Promise<string> {
  const maps = mappings(pid);
  const sum = (ms: Mapping[]) => ms.reduce((a, m) => a + m.rssKiB, 0) / 1024;
  const total = sum(maps);
  const binary = sum(maps.filter((m) => m.name.endsWith('/node')));
  const anonMaps = maps.filter((m) => m.name === '[anonymous]' || m.name === '[heap]');
  const anon = sum(anonMaps);
  const files = new Map<string, number>();
  for (const m of maps) if (m.name.startsWith('/') && !m.name.endsWith('/node')) files.set(m.name, (files.get(m.name) ?? 0) + m.rssKiB / 1024);
  const bigFiles = [...files].filter(([, v]) => v >= 1).sort((a, b) => b[1] - a[1]);
  const kinds = anonymousByKind(maps);
  const text = await (await fetch(`${adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const space = (kind: 'used' | 'total', s: string) =>
    Number(new RegExp(`^portcullis_nodejs_heap_space_size_${kind}_bytes\\{space="${s}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  const spaces = ['new', 'old', 'code', 'large_object'];
  // Every space V8 reports (read-only, trusted, new_large_object... too), for the total.
  const allSpaces = [...text.matchAll(/^portcullis_nodejs_heap_space_size_total_bytes\{space="([^"]+)"\}/gm)].map((m) => m[1]!);
  const v8Total = allSpaces.reduce((a, s) => a + space('total', s), 0);
  const others = allSpaces.filter((s) => !spaces.includes(s) && space('total', s) >= 0.05);
  // The kernel's own split (/proc/<pid>/status): anonymous, file-backed (the binary, libraries, mapped weights), shared.
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024;
  const threads = kib('Threads') * 1024;
  const external = Number(/^portcullis_nodejs_external_memory_bytes (\S+)$/m.exec(text)?.[1] ?? Number.NaN) / 2 ** 20;
  const wasm = kinds.wasm.filter((w) => w >= 0.05).sort((a, b) => b - a);
  return [
    `RSS ${mib(total)} (status: RssAnon ${mib(kib('RssAnon'))}, RssFile ${mib(kib('RssFile'))}, RssShmem ${mib(kib('RssShmem'))}; ${threads} threads)`,
    `    node binary ${mib(binary)}, other files ${mib(total - binary - anon)}${bigFiles.length ? ` (${bigFiles.map(([k, v]) => `${k.split('/').pop()} ${v.toFixed(1)}`).join(', ')})` : ''}, anonymous ${mib(anon)}`,
    `    V8 heap ${mib(v8Total)} committed: ${[...spaces, ...others].map((s) => `${s} ${space('used', s).toFixed(1)} used of ${space('total', s).toFixed(1)}`).join(', ')} MiB`,
    `    outside V8's heap (external ${mib(external)}): about ${mib(anon - v8Total)}`,
    `    anonymous by reservation: WebAssembly memories ${mib(wasm.reduce((a, b) => a + b, 0))} (${kinds.wasm.length}: ${wasm.map((w) => w.toFixed(1)).join(', ')} MiB), malloc ${mib(kinds.mainArena + kinds.arenas)} (main arena ${mib(kinds.mainArena)}, the others ${mib(kinds.arenas)}), thread stacks ${mib(kinds.stacks)}, V8 and the rest ${mib(kinds.other)}`,
    `    malloc_trim (src/malloc-trim.ts): ${trimLine(text)}; the executable's start-up pages dropped (src/start-pages.ts): ${mib(
      Number(/^portcullis_start_pages_released_bytes (\S+)$/m.exec(text)?.[1] ?? 0) / 2 ** 20,
    )}`,
  ].join('\n');
}

/**
 * The process's minor page faults so far (/proc/<pid>/stat, field 10): a page the process touches again after
 * it was given back (malloc_trim, a V8 space uncommitted) is one fault and a zeroed page, so faults per call
 * are what giving memory back costs the calls, counted rather than timed.
 */
function minorFaults(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[7]);
}

/** How many malloc_trim(0) calls the gateway made so far, how many gave memory back, and their time on its main thread. */
function trimLine(text: string): string {
  const read = (re: RegExp) => Number(re.exec(text)?.[1] ?? 0);
  if (read(/^portcullis_malloc_trim_available (\S+)$/m) !== 1) return 'off or unavailable';
  const count = read(/^portcullis_malloc_trim_duration_seconds_count (\S+)$/m);
  const sum = read(/^portcullis_malloc_trim_duration_seconds_sum (\S+)$/m) * 1000;
  const released = read(/^portcullis_malloc_trims_total\{result="released"\} (\S+)$/m);
  return `${count} calls, ${released} released memory, ${sum.toFixed(2)} ms in all (${count ? (sum / count).toFixed(2) : '-'} ms each)`;
}

/**
 * --trace-gc's pause of each collection (`Scavenge 12.1 (14.0) -> 3.2 (15.0) MB, pooled: 0 MB, 1.23 / 0.00 ms`:
 * the first figure after the sizes is the main thread's pause), or --trace-gc-nvp's (`pause=1.2 ... gc=s`),
 * summed up by kind: count, median, p99 of the pauses, max, and their sum.
 */
function gcPauses(lines: string[]): string[] {
  const by = new Map<string, number[]>();
  const NVP_KIND: Record<string, string> = { s: 'Scavenge', mc: 'Mark-Compact', mms: 'Minor Mark-Sweep' };
  for (const l of lines) {
    const m = /(Scavenge|Mark-Compact|Mark-Compact \(reduce\)|Minor Mark-Sweep)\b[^,]*MB(?:, pooled: [\d.]+ MB)?, ([\d.]+) \/ [\d.]+ ms/.exec(l);
    const nvp = m ? null : nvpFields(l);
    const kind = m ? m[1]! : NVP_KIND[nvp?.get('gc') ?? ''];
    if (!kind) continue;
    const a = by.get(kind) ?? [];
    a.push(Number(m ? m[2] : nvp!.get('pause')));
    by.set(kind, a);
  }
  return [...by].map(([kind, ms]) => {
    const s = [...ms].sort((a, b) => a - b);
    const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
    return `${kind}: ${s.length}, median ${q(0.5).toFixed(2)}, p99 ${q(0.99).toFixed(2)}, max ${s.at(-1)!.toFixed(2)}, sum ${s.reduce((x, y) => x + y, 0).toFixed(0)} ms`;
  });
}

/** One --trace-gc-nvp line's name=value fields (empty for any other line). */
function nvpFields(line: string): Map<string, string> {
  return new Map([...line.matchAll(/(\S+?)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

/**
 * With --trace-gc-nvp: what brings the full collections and what each costs. The young generation's
 * collections say how much of what they found survived and how much of it went on to the old generation
 * (`promoted`: what fills the old generation up to its limit, and so brings the next full collection); each
 * full collection's atomic pause by phase, the main thread's incremental marking before it, and the marking
 * done on V8's helper threads (CPU time, which on one core is taken from the main thread too).
 */
function gcPromotion(lines: string[]): string[] {
  const sc: Map<string, string>[] = [];
  const mc: Map<string, string>[] = [];
  for (const l of lines) {
    const f = nvpFields(l);
    if (f.get('gc') === 's') sc.push(f);
    else if (f.get('gc') === 'mc') mc.push(f);
  }
  if (!sc.length && !mc.length) return [];
  const sum = (a: Map<string, string>[], k: string) => a.reduce((x, f) => x + Number(f.get(k) ?? 0), 0);
  const med = (a: Map<string, string>[], k: string) => {
    const v = a.map((f) => Number(f.get(k) ?? 0)).sort((x, y) => x - y);
    return v.length ? v[Math.floor(v.length / 2)]!.toFixed(1) : '-';
  };
  const allocated = sum(sc, 'allocated');
  return [
    // --minor-ms promotes whole pages, which its lines do not count as promoted: only the scavenger's are summed.
    ...(sc.length ? [] : ['young generation: no scavenges (--minor-ms?): what it promotes is not counted here']),
    ...(sc.length
      ? [
          `young generation: ${sc.length} scavenges, ${mib(allocated / 2 ** 20)} allocated; survived ${((100 * sum(sc, 'new_space_survived')) / allocated).toFixed(2)} %, promoted ${((100 * sum(sc, 'promoted')) / allocated).toFixed(2)} % (${mib(sum(sc, 'promoted') / 2 ** 20)})`,
        ]
      : []),
    `full collections: ${mc.length}${mc.length ? `${sc.length ? `, one per ${mib(allocated / mc.length / 2 ** 20)} allocated` : ''}; medians, ms: pause ${med(mc, 'pause')} (evacuate ${med(mc, 'evacuate')}, finish ${med(mc, 'finish')}, mark ${med(mc, 'mark')}), incremental marking before it ${med(mc, 'incremental')} (longest step ${med(mc, 'incremental_longest_step')}), marking on helper threads ${med(mc, 'background.mark')}` : ''}`,
  ];
}

async function takeSnapshot(pid: number, dir: string, label: string): Promise<void> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    // Written when its size stops changing.
    if (file) {
      const a = readFileSync(join(dir, file)).length;
      await sleep(1000);
      if (readFileSync(join(dir, file)).length === a && a > 0) {
        log(`heap snapshot ${label}: ${join(dir, file)}`);
        for (const l of heapSummary(join(dir, file))) log(`  ${l}`);
        return;
      }
    }
  }
  log(`heap snapshot ${label}: none written`);
}

const mock = await startServer({
  name: 'mock upstream',
  args: ['--import', 'tsx', join(REPO, 'bench/harness/mock-upstream.ts')],
  pin: noPin,
  ready: /listening (\d+)/,
});
const redis = await startRedisServer();
const body = bodyTemplate({ size: 'small', stream: false });
const seconds = Number(args.seconds);
const before = Number(args.before);

async function soak(choice: SourceChoice, name: string): Promise<void> {
  const snapshot = await buildSnapshot(choice, log);
  const snapDir = mkdtempSync(join(tmpdir(), 'portcullis-memory-'));
  const flags = args['node-flags'].split(' ').filter(Boolean);
  const gw = await startPortcullis({
    snapshot,
    mockBaseUrl: `http://127.0.0.1:${mock.port}/v1`,
    redisUrl: redis.url,
    pin: noPin,
    name: `portcullis (${name})`,
    ...(choice === 'worktree' && args.compare ? { env: parseEnv(args['after-env']) } : {}),
    nodeFlags: [...flags, ...(args.snapshot ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`] : [])],
  });
  // --trace-gc lines, kept apart from the gateway's logs (which the harness keeps only the tail of).
  const gcLines: string[] = [];
  let gcFrom = 0;
  let gcDuringLoad = 0;
  gw.server.child.stdout!.on('data', (c: Buffer) =>
    gcLines.push(
      ...c
        .toString()
        .split('\n')
        .filter((l) => /Mark-Compact|Scavenge|Mark-sweep|pause=/.test(l)),
    ),
  );
  const pid0 = gw.server.pid;
  try {
    const pid = gw.server.pid;
    log(`${name}: gateway ${snapshot.source} (pid ${pid}), RSS idle ${mib(memoryOf(pid)!.rssMiB)}`);
    log(`${name}: idle ${await breakdown(pid, gw.adminUrl)}`);
    if (before > 0) {
      const faults0 = minorFaults(pid);
      let calls = 0;
      // The full bench's order: the 100 KB scenarios (their scans grow the scanner's memory and the heap) before the soak.
      for (const stream of [false, true]) {
        const r = await runLoad({
          url: `${gw.apiUrl}/v1/chat/completions`,
          headers: { authorization: `Bearer ${gw.token}` },
          body: bodyTemplate({ size: 'large', stream }),
          connections: Number(args.connections),
          durationSec: before / 2,
        });
        log(`${name}: 100 KB calls${stream ? ', streaming' : ''}: ${Math.round(r.rps)} req/s, ${r.errors} errors over ${before / 2} s`);
        calls += r.ok;
      }
      log(`${name}: 100 KB calls: ${((minorFaults(pid) - faults0) / calls).toFixed(1)} minor page faults per call`);
      log(`${name}: after the 100 KB calls ${await breakdown(pid, gw.adminUrl)}`);
    }
    if (args.snapshot) await takeSnapshot(pid, snapDir, 'before the load');
    const samples: Array<{ t: number; rss: number }> = [];
    const started = performance.now();
    const sample = () => {
      const m = memoryOf(pid);
      if (m) samples.push({ t: (performance.now() - started) / 1000, rss: m.rssMiB });
    };
    sample();
    const timer = setInterval(sample, 1000);
    const ticks0 = processTicks(pid);
    const faults0 = minorFaults(pid);
    gcFrom = gcLines.length;
    const r = await runLoad({
      url: `${gw.apiUrl}/v1/chat/completions`,
      headers: { authorization: `Bearer ${gw.token}` },
      body,
      connections: Number(args.connections),
      durationSec: seconds,
      ...(args.rate ? { rate: Number(args.rate) } : {}),
    });
    clearInterval(timer);
    const lat = r.latency;
    log(
      `${name}: latency p50 ${lat.p50.toFixed(2)} ms, p90 ${lat.p90.toFixed(2)}, p99 ${lat.p99.toFixed(2)}, max ${lat.max.toFixed(1)}${r.overloaded ? ' (rate not held)' : ''}`,
    );
    gcDuringLoad = gcLines.length;
    sample();
    const rss = samples.map((s) => s.rss);
    const floor = (from: number, to: number) => Math.min(...samples.filter((s) => s.t >= from * seconds && s.t <= to * seconds + 1e-9).map((s) => s.rss));
    // CPU per call too: a heap setting that saves memory must not cost it back in GC time.
    const cpuMs = ((processTicks(pid) - ticks0) * (1000 / HZ)) / r.ok;
    const faults = (minorFaults(pid) - faults0) / r.ok;
    log(
      `${name}: ${Math.round(r.rps)} req/s, ${r.errors} errors over ${seconds} s, ${cpuMs.toFixed(3)} ms gateway CPU per call, ${faults.toFixed(1)} minor page faults per call`,
    );
    log(
      `${name}: RSS start ${mib(rss[0]!)}, floor (3rd quarter) ${mib(floor(0.5, 0.75))}, floor (last quarter) ${mib(floor(0.75, 1))}, max ${mib(Math.max(...rss))}, end ${mib(rss.at(-1)!)}, peak VmHWM ${mib(memoryOf(pid)!.peakMiB)}`,
    );
    log(
      `${name}: RSS every 5 s: ${samples
        .filter((_, i) => i % 5 === 0)
        .map((s) => s.rss.toFixed(0))
        .join(' ')}`,
    );
    log(`${name}: after the load ${await breakdown(pid, gw.adminUrl)}`);
    if (args.snapshot) await takeSnapshot(pid, snapDir, 'after the load');
  } finally {
    if (flags.some((f) => f.startsWith('--trace-gc'))) {
      const marks = gcLines.filter((l) => /Mark-Compact| gc=mc /.test(l));
      log(
        `${name}: ${gcLines.length - marks.length} young-generation collections, ${marks.length} mark-compacts; the last ones:\n${marks.slice(-6).join('\n')}\n${gcLines.at(-1) ?? ''}`,
      );
      const gcFile = join(tmpdir(), `portcullis-memory-gc-${pid0}.log`);
      writeFileSync(gcFile, `${gcLines.join('\n')}\n`);
      log(`${name}: every --trace-gc line in ${gcFile}; pauses of the main thread by kind (the soak's lines only), ms:`);
      for (const l of [...gcPauses(gcLines.slice(gcFrom, gcDuringLoad)), ...gcPromotion(gcLines.slice(gcFrom, gcDuringLoad))]) log(`  ${l}`);
    }
    await gw.server.stop();
    snapshot.remove();
    if (!args.snapshot) rmSync(snapDir, { recursive: true, force: true });
  }
}

try {
  if (args.compare) {
    await soak('head', 'before (HEAD)');
    await soak('worktree', 'after (working tree)');
  } else {
    await soak(args.gateway as SourceChoice, 'gateway');
  }
} finally {
  await mock.stop();
  await redis.stop();
}
