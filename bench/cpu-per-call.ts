/**
 * Gateway CPU per chat call, the steady figure on a shared machine: the whole R3 path (built
 * portcullis on a real redis-server, against the bench's instant mock) loaded at saturation for a while, and
 * the CPU time its process used (user + system, from /proc, 10 ms ticks) divided by the answers. Throughput
 * moves with whatever else runs on the machine; CPU per call hardly does. Optionally writes a V8 CPU profile
 * of the measured window and prints its top functions (mapped back to src/*.ts).
 *
 *   npx tsx bench/cpu-per-call.ts [--size small|large] [--stream] [--seconds 8] [--rounds 3] [--profile]
 *                                [--gateway auto|worktree|head] [--compare] [--workers N] [--after-env 'K=V ...']
 *                                [--node auto|current|22|24] [--nodes current,24] [--row R3|R1|R2]
 *                                [--pin] [--flags='--a --b' --flags=''] [--scenarios small,small-stream]
 *                                [--rate N] [--warmup 20]
 *
 * Prints the median of the rounds (and each round) as ms of gateway CPU per call, plus Redis' CPU per call;
 * each round also the commands Redis ran a call and the identity fences (PING) among them, and at the end each
 * side's commands a call by name (INFO commandstats: a script's own commands under their names, the script
 * under `evalsha`).
 * `--compare` runs HEAD and the working tree side by side, rounds interleaved: the before/after of a change
 * on a machine others are using. `--workers N` starts the gateway with PORTCULLIS_WORKERS=N (CPU then counts
 * the supervisor and its workers). `--node` picks the Node the gateway runs on (bench/harness/node-runtime.ts;
 * `auto`, the default, is the newest supported line unpacked here, as `npm run bench` runs it); `--nodes a,b`
 * runs the same gateway on each of those Nodes side by side, rounds interleaved, as `--compare` does for code.
 * `--after-env 'K=V ...'` gives the working tree's gateway more environment under `--compare` (with a clean tree:
 * the same code with and without a setting, such as another malloc through LD_PRELOAD).
 * `--row R1` (or R2) measures the bench's bare forwarder (or its Koa forwarder) instead of the gateway: with
 * `--nodes`, what a Node release does to the floor every ratio is taken against.
 * `--pin` pins as `npm run bench` does (bench/harness/processes.ts): this process, the mock and Redis on core 0,
 * the server under test on core 1 (with --workers N > 1, on cores 0..N-1).
 * `--flags='...'`, given more than once, runs one build under each set of node flags side by side, rounds
 * interleaved (`--flags=''` is the gateway as it starts by itself): what a V8 setting does to the same code.
 * A word `cores=LIST` in a set is not a node flag: with --pin, that side runs on those cores (taskset -c LIST;
 * `cores=0-1` is the whole machine, as unpinned), so pinned and unpinned run side by side too.
 * `--scenarios a,b` measures each of those bodies (small, small-stream, large, large-stream) in every round, in
 * that order, on the same processes, instead of --size/--stream.
 * `--warmup SEC` (default 20) loads each side before the rounds: V8 goes on compiling the gateway's path for
 * about half a minute of load, and rounds taken before that measure the compiler too.
 * `--rate N` loads at N calls a second instead of at saturation: at saturation the CPU per call falls with the
 * rate (more calls share each turn of the event loop), so on a busy machine, where each side reaches a
 * different rate, a fixed rate that every side holds compares like with like.
 * With --nodes, --compare or --flags the order of the sides turns by one each round, so that none always
 * runs first.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from 'redis';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { bodyTemplate, type BodyTemplate } from './harness/bodies.js';
import { runLoad } from './harness/load.js';
import { memoryOf, pinSelf, startServer, type Pinning, type ServerProcess } from './harness/processes.js';
import { buildSnapshot, parseEnv, REPO, startPortcullis, type Snapshot, type SourceChoice } from './harness/portcullis.js';
import { findRedisPid, HZ, processTicks, threadTicks } from './harness/cpu-usage.js';
import { summariseProfile } from './harness/cpu-profile.js';
import { chooseNode, type NodeRuntime } from './harness/node-runtime.js';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    stream: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    profile: { type: 'boolean', default: false },
    gateway: { type: 'string', default: 'auto' },
    compare: { type: 'boolean', default: false },
    workers: { type: 'string', default: '1' },
    node: { type: 'string', default: 'auto' },
    nodes: { type: 'string' },
    row: { type: 'string', default: 'R3' },
    'after-env': { type: 'string', default: '' },
    pin: { type: 'boolean', default: false },
    flags: { type: 'string', multiple: true },
    scenarios: { type: 'string' },
    rate: { type: 'string' },
    warmup: { type: 'string', default: '20' },
  },
});
const noPin = { enabled: false, harnessCore: null, serverCore: null, how: 'not pinned' };
const log = (s: string) => process.stdout.write(`${s}\n`);
/** With --pin, before anything is spawned: what this process starts from now on inherits core 0. */
const serverPin: Pinning = args.pin ? pinSelf(true) : noPin;
if (args.pin) log(serverPin.how);

const mock = await startServer({
  name: 'mock upstream',
  args: ['--import', 'tsx', join(REPO, 'bench/harness/mock-upstream.ts')],
  pin: noPin,
  ready: /listening (\d+)/,
});
const redis = await startRedisServer();
const redisPid = findRedisPid(redis.port);
/**
 * Redis' own count of the commands it ran, from INFO commandstats: all of them (the commands scripts run
 * count too) and PING (the identity cache's fence, src/store/identity-cache.ts). Each round's difference per
 * answer is printed beside its CPU: a count does not move with the machine's load as CPU does.
 */
const statsClient = createClient({ url: redis.url });
await statsClient.connect();
async function commandCounts(): Promise<{ all: number; ping: number; byName: Map<string, number> }> {
  const text = await statsClient.sendCommand<string>(['INFO', 'commandstats']);
  let all = 0;
  let ping = 0;
  const byName = new Map<string, number>();
  for (const m of String(text).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (m[1] === 'info') continue;
    all += Number(m[2]);
    byName.set(m[1]!, Number(m[2]));
    if (m[1] === 'ping') ping += Number(m[2]);
  }
  return { all, ping, byName };
}
/** CPU ticks of a process and its children (the workers, with --workers N). */
function treeTicks(pid: number): number {
  let ticks = processTicks(pid);
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) ticks += processTicks(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return ticks;
}
const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** `--scenarios small,small-stream` measures each in every round, in that order, as `npm run bench` names them. */
const scenarios = (args.scenarios?.split(',') ?? [`${args.size}${args.stream ? '-stream' : ''}`]).map((id) => {
  const m = /^(small|large)(-stream)?$/.exec(id);
  if (!m) throw new Error(`--scenarios takes small, small-stream, large, large-stream, not ${id}`);
  return { id, body: bodyTemplate({ size: m[1] as 'small' | 'large', stream: m[2] !== undefined }) };
});
// A scenario named twice (`large,small,small-stream,small`: small after large, and after small-stream) is
// reported once per place, as small#1 and small#2.
const named = new Map<string, number>();
for (const c of scenarios) named.set(c.id, (named.get(c.id) ?? 0) + 1);
const placed = new Map<string, number>();
for (const c of scenarios) {
  if (named.get(c.id)! < 2) continue;
  placed.set(c.id, (placed.get(c.id) ?? 0) + 1);
  c.id = `${c.id}#${placed.get(c.id)}`;
}

interface Side {
  name: string;
  snapshot: Snapshot;
  /** The server under test: the gateway, or with --row R1/R2 the bench's forwarder (no token). */
  gw: { server: ServerProcess; apiUrl: string; token: string };
  profDir: string;
  rounds: Array<{ scenario: string; gw: number; redis: number; rps: number }>;
  /** Per scenario: CPU ticks by thread name, added up over the rounds, and the answers they served. */
  threads: Map<string, Map<string, number>>;
  /** Per scenario: the commands Redis ran by name (INFO commandstats), added up over the rounds. */
  commands: Map<string, Map<string, number>>;
  answers: Map<string, number>;
}

async function side(name: string, choice: SourceChoice | Snapshot, node: NodeRuntime, nodeFlags: string[] = [], cores?: string): Promise<Side> {
  const snapshot = typeof choice === 'string' ? await buildSnapshot(choice, log) : choice;
  const profDir = mkdtempSync(join(tmpdir(), 'portcullis-cpu-per-call-'));
  const flags = [...nodeFlags, ...(args.profile ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [])];
  if (args.row !== 'R3') {
    const script = { R1: 'bench/harness/bare-proxy.ts', R2: 'bench/harness/koa-proxy.ts' }[args.row];
    if (!script) throw new Error(`--row takes R1, R2 or R3, not ${args.row}`);
    const server = await startServer({
      name: `${args.row} (${name})`,
      command: node.path,
      args: [...flags, '--import', 'tsx', join(REPO, script)],
      env: { UPSTREAM: `http://127.0.0.1:${mock.port}/v1`, PORT: '0' },
      pin: serverPin,
      ready: /listening (\d+)/,
    });
    log(`${name}: ${args.row} on Node ${node.version} (${node.how})`);
    return {
      name,
      snapshot,
      gw: { server, apiUrl: `http://127.0.0.1:${server.port}`, token: 'none' },
      profDir,
      rounds: [],
      threads: new Map(),
      commands: new Map(),
      answers: new Map(),
    };
  }
  const gw = await startPortcullis({
    snapshot,
    mockBaseUrl: `http://127.0.0.1:${mock.port}/v1`,
    redisUrl: redis.url,
    pin: serverPin,
    name: `portcullis (${name})`,
    workers: Number(args.workers),
    ...(cores ? { cores } : {}),
    node: node.path,
    nodeFlags: flags,
    ...(choice === 'worktree' && args.compare ? { env: parseEnv(args['after-env']) } : {}),
  });
  log(`${name}: gateway ${snapshot.source} on Node ${node.version} (${node.how})`);
  return { name, snapshot, gw, profDir, rounds: [], threads: new Map(), commands: new Map(), answers: new Map() };
}

// --compare: HEAD and the working tree side by side, their rounds interleaved, so that whatever else the
// machine does meanwhile weighs on both alike.
// --nodes: one gateway build on each Node, likewise interleaved.
async function sidesToRun(): Promise<Side[]> {
  if (args.flags) {
    const snapshot = await buildSnapshot(args.gateway as SourceChoice, log);
    const node = chooseNode(REPO, args.node);
    const out: Side[] = [];
    for (const [i, f] of args.flags.entries()) {
      const words = f.split(/\s+/).filter(Boolean);
      const flags = words.filter((w) => !w.startsWith('cores='));
      const cores = words.find((w) => w.startsWith('cores='))?.slice('cores='.length);
      const last = i === args.flags.length - 1;
      const name = words.length ? words.join(' ') : 'no flags';
      out.push(await side(name, last ? snapshot : { ...snapshot, remove: () => undefined }, node, flags, cores));
    }
    return out;
  }
  if (args.nodes) {
    const snapshot = await buildSnapshot(args.gateway as SourceChoice, log);
    const nodes = args.nodes.split(',');
    const out: Side[] = [];
    for (const [i, n] of nodes.entries()) {
      const node = chooseNode(REPO, n);
      // The sides share one build: the last one stopped removes it.
      out.push(await side(`Node ${node.version}`, i === nodes.length - 1 ? snapshot : { ...snapshot, remove: () => undefined }, node));
    }
    return out;
  }
  const node = chooseNode(REPO, args.node);
  return args.compare
    ? [await side('before (HEAD)', 'head', node), await side('after (working tree)', 'worktree', node)]
    : [await side('gateway', args.gateway as SourceChoice, node)];
}
const sides = await sidesToRun();
try {
  const target = (s: Side, body: BodyTemplate) => ({
    url: `${s.gw.apiUrl}/v1/chat/completions`,
    headers: { authorization: `Bearer ${s.gw.token}` },
    body,
    connections: Number(args.connections),
  });
  log(`${scenarios.map((c) => c.id).join(', ')}; warming up`);
  // A gateway keeps compiling its path for about half a minute of load (bench/README.md, "2026-11-27, late").
  // `--warmup 0 --rounds 1 --scenarios small,large,small,...` measures a cold gateway window after window.
  if (Number(args.warmup) > 0) {
    for (const s of sides) for (const c of scenarios) await runLoad({ ...target(s, c.body), durationSec: Number(args.warmup) / scenarios.length });
  }
  const from = Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < Number(args.rounds); i++) {
    for (const s of [...sides.slice(i % sides.length), ...sides.slice(0, i % sides.length)]) {
      for (const c of scenarios) {
        const g0 = treeTicks(s.gw.server.pid);
        const t0 = threadTicks(s.gw.server.pid);
        const r0 = redisPid ? processTicks(redisPid) : 0;
        const k0 = await commandCounts();
        const r = await runLoad({ ...target(s, c.body), durationSec: Number(args.seconds), ...(args.rate ? { rate: Number(args.rate) } : { minAnswers: 1 }) });
        const g = ((treeTicks(s.gw.server.pid) - g0) * (1000 / HZ)) / r.ok;
        const rd = redisPid ? ((processTicks(redisPid) - r0) * (1000 / HZ)) / r.ok : Number.NaN;
        const k1 = await commandCounts();
        s.rounds.push({ scenario: c.id, gw: g, redis: rd, rps: r.rps });
        const threads = s.threads.get(c.id) ?? new Map<string, number>();
        for (const [name, ticks] of threadTicks(s.gw.server.pid)) threads.set(name, (threads.get(name) ?? 0) + ticks - (t0.get(name) ?? 0));
        s.threads.set(c.id, threads);
        const commands = s.commands.get(c.id) ?? new Map<string, number>();
        for (const [name, n] of k1.byName) commands.set(name, (commands.get(name) ?? 0) + n - (k0.byName.get(name) ?? 0));
        s.commands.set(c.id, commands);
        s.answers.set(c.id, (s.answers.get(c.id) ?? 0) + r.ok);
        log(
          `  round ${i + 1} ${s.name}${scenarios.length > 1 ? `, ${c.id}` : ''}: ${g.toFixed(3)} ms gateway CPU per call (+ ${rd.toFixed(3)} redis), ${Math.round(r.rps)} req/s (${((g * r.rps) / 1000).toFixed(2)} cores busy)${r.overloaded ? ' OVERLOADED' : ''}, ${r.errors} errors; Redis ran ${((k1.all - k0.all) / r.ok).toFixed(2)} commands a call, scripts' own included (PING, the identity fence: ${((k1.ping - k0.ping) / r.ok).toFixed(2)})`,
        );
      }
    }
  }
  const to = Number(process.hrtime.bigint() / 1000n);
  log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const s of sides) {
    for (const c of scenarios) {
      const rounds = s.rounds.filter((r) => r.scenario === c.id);
      log(
        `median ${s.name}${scenarios.length > 1 ? `, ${c.id}` : ''}: ${median(rounds.map((r) => r.gw)).toFixed(3)} ms gateway CPU per call (least ${Math.min(...rounds.map((r) => r.gw)).toFixed(3)}) (+ ${median(rounds.map((r) => r.redis)).toFixed(3)} redis), ${Math.round(median(rounds.map((r) => r.rps)))} req/s`,
      );
    }
    log(`  ${s.name}: RSS at the end ${memoryOf(s.gw.server.pid)?.rssMiB.toFixed(0) ?? '?'} MiB`);
    for (const c of scenarios) {
      const parts = [...(s.threads.get(c.id) ?? [])].filter(([, t]) => t > 0).sort((a, b) => b[1] - a[1]);
      const n = s.answers.get(c.id) ?? 1;
      log(
        `  ${s.name}${scenarios.length > 1 ? `, ${c.id}` : ''} by thread (all rounds): ${parts.map(([name, t]) => `${name} ${((t * (1000 / HZ)) / n).toFixed(3)}`).join(', ')} ms per call`,
      );
      const named = [...(s.commands.get(c.id) ?? [])].filter(([, k]) => k / n >= 0.005).sort((a, b) => b[1] - a[1]);
      log(
        `  ${s.name}${scenarios.length > 1 ? `, ${c.id}` : ''} Redis commands a call by name (all rounds): ${named.map(([name, k]) => `${name} ${(k / n).toFixed(2)}`).join(', ')}`,
      );
    }
  }
  if (args.profile) {
    for (const s of sides) {
      await s.gw.server.stop();
      const file = readdirSync(s.profDir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) continue;
      const sum = summariseProfile(join(s.profDir, file), s.snapshot.dir, [from, to], 40);
      log(`${s.name}: top functions by self time (share of busy time):`);
      for (const e of sum.top) log(`  ${e.selfPct.toFixed(1).padStart(5)} %  ${e.function}  ${e.location}`);
      log(`${s.name}: portcullis functions by inclusive time (share of busy time):`);
      for (const e of sum.inclusive.slice(0, 30)) log(`  ${e.selfPct.toFixed(1).padStart(5)} %  ${e.function}  ${e.location}`);
      log(`${s.name}: by owner: ${sum.byOwner.map((o) => `${o.owner} ${o.selfPct.toFixed(1)} %`).join(', ')}`);
      log(`${s.name}: profile ${join(s.profDir, file)}`);
    }
  }
} finally {
  for (const s of sides) {
    await s.gw.server.stop();
    s.snapshot.remove();
    if (!args.profile) rmSync(s.profDir, { recursive: true, force: true });
  }
  await mock.stop();
  statsClient.destroy();
  await redis.stop();
}
