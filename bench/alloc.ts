/**
 * Bytes the gateway allocates on V8's heap per call, and where: a count, which the machine's load does not
 * move as it moves CPU time. Every byte a call allocates passes through the young generation, so this is
 * what sets how often the scavenger runs (CPU per call, pauses in the tail) and how large a young
 * generation the gateway needs for a given scavenge rate (RSS; src/heap.ts).
 *
 *   npx tsx bench/alloc.ts [--size small|large] [--stream] [--seconds 6] [--rounds 3] [--warmup 15]
 *                          [--connections 16] [--interval 4096] [--top 25] [--depth 1] [--gateway auto|worktree|head]
 *                          [--compare] [--pin] [--rate N] [--idle 5] [--survivors]
 *
 * The gateway starts as bench/cpu-per-call.ts starts it (the built snapshot, a real redis-server, the instant
 * mock; bench/harness/portcullis.ts), with the inspector on a free local port. After the warm-up (V8's
 * optimised code allocates less than its first tiers: escape analysis removes some objects), each round runs
 * V8's sampling heap profiler (`HeapProfiler.startSampling`, keeping the objects the scavenger and the full
 * collector freed meanwhile, so everything allocated is counted, not only what survives) over a window of
 * load and divides by the answers. V8 samples one allocation every `--interval` bytes on average and scales
 * each sample by its chance of being taken, so a site's figure is an estimate without bias; at 4 KiB and a
 * few thousand calls its error is well under a percent of the total. Only the JS heap is counted: Buffer
 * and ArrayBuffer contents live outside it (their JS objects are counted). What the process allocates
 * between calls in the window (timers, the metrics' and the store's own work) is charged to the calls.
 *
 * It prints the median bytes a call over the rounds, then the allocating sites over all rounds, bytes a call:
 *  - by owner: the innermost frame that has a file (a builtin's allocation goes to its caller): portcullis,
 *    a package (koa, @redis/client, undici, pino...) or node;
 *  - by area: the folder of the innermost portcullis frame (src/guard, src/store, src/http...), what the view
 *    below adds up to;
 *  - by our code: each allocation charged to the innermost portcullis function on its stack (Node's, Koa's,
 *    the Redis client's and V8's own allocations to the code of ours that called them), or, when no frame
 *    of ours is on the stack (HTTP parsing, socket reads, the Redis client's replies), to the innermost
 *    frame there is, marked `(no portcullis frame)`; `--depth N` names the N innermost portcullis frames
 *    (the function, then its callers), to tell apart the callers of a shared helper;
 *  - by allocating function (self): the innermost frame, whoever's (a V8 builtin's with its caller);
 *  - inclusive: every portcullis function on the stack, counted once.
 * `--survivors` counts only what outlived a young-generation collection (V8's sampling leaves out what the
 * scavenger freed): what is promoted, or still young at the window's end, by the site that allocated it. A
 * call's objects appear here only when a scavenge caught them alive, so the figure follows the calls in flight
 * and anything that keeps a call's objects reachable after it ended.
 * `--compare` measures HEAD and the working tree side by side, rounds interleaved, and prints both columns.
 *
 * What the gateway allocates between calls is charged to them, so the figure a call grows as the rate falls
 * (on a loaded machine, 225 KiB a call at 130 calls a second and 245 at 40, the same build). Hence `--idle SEC`
 * (default 5, 0 for none): each side's allocation with no load, measured once before the rounds and printed
 * as KiB a second; each round is also given less that rate over its length. `--rate N` loads both sides at
 * the same fixed rate instead of at saturation, so that they carry the same share of it.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { bodyTemplate } from './harness/bodies.js';
import { runLoad } from './harness/load.js';
import { pinSelf, startServer, type Pinning } from './harness/processes.js';
import { buildSnapshot, REPO, startPortcullis, type Portcullis, type Snapshot, type SourceChoice } from './harness/portcullis.js';
import { ownerOf, type CallFrame } from './harness/cpu-profile.js';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    stream: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '6' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '15' },
    connections: { type: 'string', default: '16' },
    interval: { type: 'string', default: '4096' },
    top: { type: 'string', default: '25' },
    depth: { type: 'string', default: '1' },
    gateway: { type: 'string', default: 'auto' },
    compare: { type: 'boolean', default: false },
    pin: { type: 'boolean', default: false },
    rate: { type: 'string' },
    idle: { type: 'string', default: '5' },
    survivors: { type: 'boolean', default: false },
  },
});
const log = (s: string) => process.stdout.write(`${s}\n`);
const noPin: Pinning = { enabled: false, harnessCore: null, serverCore: null, how: 'not pinned' };
const pin: Pinning = args.pin ? pinSelf(true) : noPin;
if (args.pin) log(pin.how);

// The inspector protocol, the little of it used here ----------------------------------------------------

interface HeapNode {
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

class Inspector {
  readonly #ws: WebSocket;
  #id = 0;
  readonly #waiting = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.addEventListener('message', (e) => {
      const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
      if (msg.id === undefined) return;
      const w = this.#waiting.get(msg.id);
      this.#waiting.delete(msg.id);
      if (msg.error) w?.reject(new Error(msg.error.message));
      else w?.resolve(msg.result);
    });
  }

  static async open(url: string): Promise<Inspector> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`cannot reach the gateway's inspector at ${url}`)), { once: true });
    });
    return new Inspector(ws);
  }

  send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#id;
    this.#ws.send(JSON.stringify({ id, method, params }));
    return new Promise((resolve, reject) => this.#waiting.set(id, { resolve, reject }));
  }

  close(): void {
    this.#ws.close();
  }
}

// Sites -------------------------------------------------------------------------------------------------

/** Bytes by site name, added up over rounds. */
type Sites = Map<string, number>;
const add = (m: Sites, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);

interface Tally {
  bytes: number;
  owner: Sites;
  area: Sites;
  ours: Sites;
  self: Sites;
  inclusive: Sites;
}

function siteName(frame: CallFrame, root: string): { owner: string; name: string } {
  const { owner, location } = ownerOf(frame, root);
  const fn = frame.functionName || '(anonymous)';
  return { owner, name: location ? `${fn}  ${location}` : fn };
}

const depth = Number(args.depth);

/** `src/guard/model/language.ts:48` -> `src/guard`; `src/log.ts:79` -> `src/log.ts`. */
function areaOf(site: string): string {
  const path = /(src\/\S+?):\d+$/.exec(site)?.[1] ?? site;
  const parts = path.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : path;
}

/** Walks the sampled allocation tree once, charging each node's bytes to its sites. */
function tally(head: HeapNode, root: string, into: Tally): void {
  const walk = (node: HeapNode, stack: Array<{ owner: string; name: string }>) => {
    const here = [...stack, siteName(node.callFrame, root)];
    if (node.selfSize > 0) {
      into.bytes += node.selfSize;
      // A builtin's allocation (an array's push, a regexp's exec, an iterator's next) is named with its caller.
      const self = here.at(-1)!;
      add(into.self, self.owner === 'v8' && here.length > 1 ? `${self.name}  <  ${here.at(-2)!.name}` : self.name, node.selfSize);
      const other = here.findLast((f) => f.owner !== 'v8' && f.owner !== 'program') ?? self;
      add(into.owner, other.owner, node.selfSize);
      const ours = here.filter((f) => f.owner === 'portcullis').slice(-depth);
      add(into.area, ours.length ? areaOf(ours.at(-1)!.name) : `(no portcullis frame) ${other.owner}`, node.selfSize);
      add(
        into.ours,
        ours.length
          ? ours
              .reverse()
              .map((f) => f.name)
              .join('  <  ')
          : `(no portcullis frame) ${other.name}`,
        node.selfSize,
      );
      for (const name of new Set(here.filter((f) => f.owner === 'portcullis').map((f) => f.name))) add(into.inclusive, name, node.selfSize);
    }
    for (const c of node.children) walk(c, here);
  };
  walk(head, []);
}

// The run -----------------------------------------------------------------------------------------------

interface Side {
  name: string;
  snapshot: Snapshot;
  gw: Portcullis;
  inspector: Inspector;
  perCall: number[];
  /** The same, less what the side allocated idle over as long (bytes a second, measured before the rounds). */
  perCallBusy: number[];
  idlePerSec: number;
  calls: number;
  sites: Tally;
}

const mock = await startServer({
  name: 'mock upstream',
  args: ['--import', 'tsx', join(REPO, 'bench/harness/mock-upstream.ts')],
  pin: noPin,
  ready: /listening (\d+)/,
});
const redis = await startRedisServer();

async function side(name: string, choice: SourceChoice): Promise<Side> {
  const snapshot = await buildSnapshot(choice, log);
  const gw = await startPortcullis({
    snapshot,
    mockBaseUrl: `http://127.0.0.1:${mock.port}/v1`,
    redisUrl: redis.url,
    pin,
    name: `portcullis (${name})`,
    nodeFlags: ['--inspect=127.0.0.1:0'],
  });
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(gw.server.output())?.[1];
  if (!url) throw new Error(`the gateway (${name}) did not say where its inspector listens`);
  const inspector = await Inspector.open(url);
  await inspector.send('HeapProfiler.enable');
  log(`${name}: gateway ${snapshot.source}`);
  return {
    name,
    snapshot,
    gw,
    inspector,
    perCall: [],
    perCallBusy: [],
    idlePerSec: 0,
    calls: 0,
    sites: { bytes: 0, owner: new Map(), area: new Map(), ours: new Map(), self: new Map(), inclusive: new Map() },
  };
}

const body = bodyTemplate({ size: args.size as 'small' | 'large', stream: args.stream });
const sides: Side[] = args.compare
  ? [await side('before (HEAD)', 'head'), await side('after (working tree)', 'worktree')]
  : [await side('gateway', args.gateway as SourceChoice)];
const load = (s: Side, durationSec: number) =>
  runLoad({
    url: `${s.gw.apiUrl}/v1/chat/completions`,
    headers: { authorization: `Bearer ${s.gw.token}` },
    body,
    connections: Number(args.connections),
    durationSec,
    ...(args.rate ? { rate: Number(args.rate) } : { minAnswers: 1 }),
  });

/** One sampling window: what the gateway allocated while `during` ran, in bytes, with its sites. */
async function sampled<T>(s: Side, during: () => Promise<T>): Promise<{ tally: Tally; result: T }> {
  await s.inspector.send('HeapProfiler.startSampling', {
    samplingInterval: Number(args.interval),
    includeObjectsCollectedByMajorGC: true,
    // --survivors: leave out what the scavenger freed, so what is left is what outlived a young-generation
    // collection: what was promoted (and what the full collector freed later) or is still young at the end.
    includeObjectsCollectedByMinorGC: !args.survivors,
  });
  const result = await during();
  const { profile } = await s.inspector.send<{ profile: { head: HeapNode } }>('HeapProfiler.stopSampling');
  const t: Tally = { bytes: 0, owner: new Map(), area: new Map(), ours: new Map(), self: new Map(), inclusive: new Map() };
  tally(profile.head, s.snapshot.dir, t);
  return { tally: t, result };
}
try {
  log(`${args.size}${args.stream ? '-stream' : ''} calls; warming up${args.survivors ? '; counting only what outlived a scavenge (--survivors)' : ''}`);
  for (const s of sides) await load(s, Number(args.warmup));
  // What the gateway allocates with no call at all (timers, the metrics, the store's connections): charged to
  // the calls of a window, it weighs more per call the fewer calls a second a side reaches.
  for (const s of sides) {
    if (Number(args.idle) <= 0) break;
    const idle = await sampled(s, () => new Promise((resolve) => setTimeout(resolve, Number(args.idle) * 1000)));
    s.idlePerSec = idle.tally.bytes / Number(args.idle);
    log(`  ${s.name}: ${(s.idlePerSec / 1024).toFixed(1)} KiB a second allocated idle`);
  }
  for (let i = 0; i < Number(args.rounds); i++) {
    for (const s of [...sides.slice(i % sides.length), ...sides.slice(0, i % sides.length)]) {
      const { tally: round, result: r } = await sampled(s, () => load(s, Number(args.seconds)));
      s.perCall.push(round.bytes / r.ok);
      s.perCallBusy.push((round.bytes - s.idlePerSec * r.durationSec) / r.ok);
      s.calls += r.ok;
      s.sites.bytes += round.bytes;
      for (const k of ['owner', 'area', 'ours', 'self', 'inclusive'] as const) for (const [site, b] of round[k]) add(s.sites[k], site, b);
      log(
        `  round ${i + 1} ${s.name}: ${(round.bytes / r.ok / 1024).toFixed(1)} KiB a call over ${r.ok} calls (${Math.round(r.rps)} req/s)${r.errors ? `, ${r.errors} ERRORS` : ''}`,
      );
    }
  }
  log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const s of sides) {
    log(
      `median ${s.name}: ${(median(s.perCall) / 1024).toFixed(1)} KiB ${args.survivors ? 'outliving a scavenge' : 'allocated'} a call (rounds: ${s.perCall.map((b) => (b / 1024).toFixed(1)).join(', ')})`,
    );
    log(
      `  less the idle allocation: ${(median(s.perCallBusy) / 1024).toFixed(1)} KiB a call (rounds: ${s.perCallBusy.map((b) => (b / 1024).toFixed(1)).join(', ')})`,
    );
  }
  const top = Number(args.top);
  const kib = (b: number) => (b / 1024).toFixed(2).padStart(8);
  const views: Array<[keyof Omit<Tally, 'bytes'>, string]> = [
    ['owner', 'by whose code allocated (the innermost frame with a file: portcullis, a package, node)'],
    ['area', 'by the folder of the innermost portcullis frame (src/guard, src/store, ...)'],
    ['ours', 'by our code (the innermost portcullis frame)'],
    ['self', 'by allocating function (self)'],
    ['inclusive', 'inclusive, portcullis functions'],
  ];
  for (const [view, title] of views) {
    // Sites ranked by the last side (the working tree under --compare), each side's KiB a call beside it.
    const ranked = [...sides.at(-1)!.sites[view]].sort((a, b) => b[1] - a[1]).slice(0, top);
    if (sides.length > 1)
      for (const [site] of [...sides[0]!.sites[view]].sort((a, b) => b[1] - a[1]).slice(0, top)) if (!ranked.some(([k]) => k === site)) ranked.push([site, 0]);
    log(`\nKiB a call, ${title}${sides.length > 1 ? `: ${sides.map((s) => s.name).join(' | ')}` : ''}`);
    for (const [site] of ranked) log(`  ${sides.map((s) => kib((s.sites[view].get(site) ?? 0) / s.calls)).join(' |')}  ${site}`);
  }
} finally {
  for (const s of sides) {
    s.inspector.close();
    await s.gw.server.stop();
    s.snapshot.remove();
  }
  await mock.stop();
  await redis.stop();
}
