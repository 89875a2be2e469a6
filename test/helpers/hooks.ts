/**
 * Root hooks for every mocha run (.mocharc.json `require`): no child process outlives the test that
 * failed with it or the run, and a run that cannot end on its own says what holds it open.
 *
 * Children: every `child_process.spawn` in the test process is recorded (the builtin's export is wrapped
 * once, here, before any test file loads, so helpers and tests need not opt in). When a test fails or times
 * out, the children it started are SIGKILLed with their own descendants (a gateway's workers, the
 * redis-server `npm start` runs), since a timed-out test's `finally` may never run. At the end of the run
 * and on exit, whatever is still alive goes the same way, and the end of the run names it: a suite that
 * leaves a child behind is a suite to fix.
 *
 * Unhandled rejections: mocha listens for them only to re-emit them, so a rejection nobody handles would pass
 * unseen, while the same rejection ends a real gateway (Node's default `--unhandled-rejections=throw`), and
 * gateways run inside the test process. Each one is recorded against the test or hook running when it
 * surfaced, which fails at its end with the reason and its stack (mocha's `Runnable#run` is wrapped for this, so
 * the failure is its own, a test's body is not cut short, and a failing test does not skip the rest as a
 * failing root hook would). One that surfaces between two of them fails the next, saying after which it
 * came; one after the last fails the run, and one after the run ends the process. Uncaught exceptions mocha
 * fails tests on by itself.
 *
 * Durations: the time of every test and hook is summed per test file, and the end of the run prints the slowest
 * files, so the CI lanes (.ci/run) can be balanced on what each suite costs, not on guesses.
 *
 * Handles: the run does not force its own exit. Once every suite is done, if the process is still up a few
 * seconds later, the handles that keep it up (sockets, servers, children), the Redis clients never closed,
 * the intervals and long timeouts still pending and where the timers set since the end came from are printed,
 * and the run exits 1: a leaked handle fails the run rather than hanging it.
 */
import { createHook } from 'node:async_hooks';
import childProcess, { type ChildProcess } from 'node:child_process';
import diagnostics from 'node:diagnostics_channel';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import Mocha from 'mocha';

interface Tracked {
  child: ChildProcess;
  /** The test that started it, or null for a hook (a suite's shared process). */
  test: Mocha.Test | null;
  command: string;
}

const tracked = new Set<Tracked>();
let current: Mocha.Test | null = null;

const alive = (c: ChildProcess) => c.pid !== undefined && c.exitCode === null && c.signalCode === null;

const originalSpawn = childProcess.spawn;
function trackedSpawn(this: unknown, ...args: Parameters<typeof childProcess.spawn>): ChildProcess {
  const child = (originalSpawn as (...a: unknown[]) => ChildProcess).apply(this, args);
  const [file, argv] = args as unknown as [string, unknown];
  const entry: Tracked = { child, test: current, command: [file, ...(Array.isArray(argv) ? argv : [])].join(' ').slice(0, 200) };
  tracked.add(entry);
  child.once('exit', () => tracked.delete(entry));
  return child;
}
childProcess.spawn = trackedSpawn as typeof childProcess.spawn;
syncBuiltinESMExports();

/**
 * Where each server and client socket was opened: the first frame of a test file (not a helper) on its
 * stack, async frames included. A leaked handle is then named by the suite that opened it.
 */
const openedBy = new WeakMap<object, string>();
function whereFrom(): string {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 80;
  const stack = new Error().stack ?? '';
  Error.stackTraceLimit = limit;
  const frames = stack.split('\n').slice(1);
  const test = frames.find((l) => /\/test\/(?!helpers\/)\S*\.ts/.test(l)) ?? frames.find((l) => /\/test\//.test(l) && !/hooks\.ts/.test(l));
  return test?.trim().replace(/^at /, '') ?? 'outside the tests';
}
for (const [proto, method] of [
  [net.Server.prototype, 'listen'],
  [net.Socket.prototype, 'connect'],
] as const) {
  const original = (proto as any)[method] as (...a: unknown[]) => unknown;
  (proto as any)[method] = function (this: object, ...args: unknown[]) {
    if (!openedBy.has(this)) openedBy.set(this, whereFrom());
    return original.apply(this, args);
  };
}

/**
 * Redis clients still open: node-redis publishes each connect and each deliberate close on diagnostics
 * channels, so a client a suite never closed is named by the test (or hook) that connected it and its
 * server's port. Such a client retries its connection forever once its server is gone, and between two
 * attempts all it holds is a timer, which names nothing.
 */
const openRedis = new Map<unknown, string>();
diagnostics.subscribe('tracing:node-redis:connect:start', (message) => {
  const m = message as { clientId?: unknown; serverPort?: number; serverAddress?: string };
  if (openRedis.has(m.clientId)) return;
  const by = running ? `"${running.fullTitle()}" (${running.file ?? running.parent?.file ?? 'no file'})` : whereFrom();
  openRedis.set(m.clientId, `redis client to ${m.serverAddress ?? '?'}:${m.serverPort ?? '?'}, connected by ${by}`);
});
diagnostics.subscribe('node-redis:connection:closed', (message) => {
  const m = message as { clientId?: unknown; reason?: unknown };
  if (m.reason === 'application_close') openRedis.delete(m.clientId);
});
// A connect that rejects has ended its client: its reconnect strategy gave up (a cluster client's probe of a
// root node never retries), or it was closed meanwhile. Such a client is never closed by its owner and
// publishes no close, so without this it would be named as held open, beside whatever really holds the run.
diagnostics.subscribe('tracing:node-redis:connect:error', (message) => {
  const m = message as { clientId?: unknown; error?: unknown };
  if (!/already opened/.test(String((m.error as Error | undefined)?.message))) openRedis.delete(m.clientId);
});

/**
 * Timers set once the run is over: what keeps a leaked loop going (a retry, a poll) sets a fresh one at each
 * turn, and its stack says whose loop it is. Recorded from the end of the run only, so no suite pays for it.
 */
/** Where the caller's caller was called from: up to six frames outside Node and this file, one a line. */
function whereSet(): string {
  return (new Error().stack ?? '')
    .split('\n')
    .slice(3)
    .filter((l) => !/node:internal|hooks\.ts/.test(l))
    .slice(0, 6)
    .join('\n      ');
}

const lateTimers = new Map<string, number>();
const timerHook = createHook({
  init(_id, type) {
    if (type !== 'Timeout') return;
    const stack = whereSet();
    if (lateTimers.has(stack) || lateTimers.size < 20) lateTimers.set(stack, (lateTimers.get(stack) ?? 0) + 1);
  },
});

/**
 * How long after the last suite the process may take to close on its own. HOOKS_CLOSE_GRACE_MS shortens it
 * for the run test/mocha-hooks.test.ts holds open on purpose.
 */
const CLOSE_GRACE_MS = Number(process.env['HOOKS_CLOSE_GRACE_MS'] ?? 10_000);

/**
 * Timers that can hold the run past its close grace without setting another: intervals, and timeouts at least
 * as long as the grace (a shorter one fires within it, and one that sets another is caught by the hook above).
 * Each is recorded with where it was set, through a WeakRef (nothing is kept alive for it), and those still
 * pending and ref'd when the run is held open are named; without this a leaked interval showed only as
 * "Timeout" among the resources. Few timers are this long, so the run pays a comparison for the others.
 */
const longTimers = new Set<WeakRef<NodeJS.Timeout>>();
const timerOrigins = new WeakMap<NodeJS.Timeout, string>();
const pending = (t: NodeJS.Timeout | undefined): t is NodeJS.Timeout => t !== undefined && !(t as unknown as { _destroyed: boolean })._destroyed;
for (const name of ['setTimeout', 'setInterval'] as const) {
  const original = globalThis[name] as (...a: unknown[]) => NodeJS.Timeout;
  const wrapped = function (this: unknown, ...args: unknown[]): NodeJS.Timeout {
    const timer = original.apply(this, args);
    if (name === 'setInterval' || Number(args[1]) >= CLOSE_GRACE_MS) {
      const stack = whereSet();
      timerOrigins.set(timer, `${name === 'setInterval' ? 'an interval' : 'a timeout'} of ${Number(args[1])} ms, set at\n      ${stack}`);
      if (longTimers.size >= 5000) for (const ref of longTimers) if (!pending(ref.deref())) longTimers.delete(ref);
      longTimers.add(new WeakRef(timer));
    }
    return timer;
  };
  // util.promisify(setTimeout) and the like read properties of the builtin.
  Object.defineProperties(wrapped, Object.getOwnPropertyDescriptors(original));
  (globalThis as Record<string, unknown>)[name] = wrapped;
}

/** The recorded long timers still pending and holding the process up. */
function heldByTimers(): string[] {
  const out: string[] = [];
  for (const ref of longTimers) {
    const t = ref.deref();
    if (pending(t) && t.hasRef()) out.push(`  ${timerOrigins.get(t)}`);
  }
  return out;
}

/** Every descendant of `pid` (Linux /proc), children first found first. */
function descendants(pid: number): number[] {
  if (!existsSync('/proc')) return [];
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, ppid] of parent) {
      if (ppid === p && !out.includes(child)) {
        out.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return out;
}

/** SIGKILLs a child and everything it started (a frozen child first gets SIGCONT so it can die). */
function killTree(c: ChildProcess): void {
  if (!alive(c)) return;
  for (const pid of [...descendants(c.pid!), c.pid!]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function killAll(): Tracked[] {
  const left = [...tracked].filter((t) => alive(t.child));
  for (const t of left) killTree(t.child);
  return left;
}

process.on('exit', () => {
  killAll();
});

/**
 * A rejection nobody handled, as an error that says so: the reason's own message (and `note`) and stack,
 * the reason as `cause`.
 */
export function unhandledRejectionError(reason: unknown, note = ''): Error {
  const what = reason instanceof Error ? reason : new Error(String(reason));
  const err = new Error(`Unhandled promise rejection (it would end a gateway): ${what.message}${note}`, { cause: reason });
  err.stack = `${err.name}: ${err.message}\n  the rejected error's stack:\n${what.stack ?? '(none)'}`;
  return err;
}

/** The test or hook running now, and the rejections nobody handled meanwhile. */
let running: Mocha.Runnable | null = null;
const leaked = new Map<Mocha.Runnable, unknown[]>();
/** Rejections that surfaced between two runnables, each with the title of the one that ended before. */
let between: Array<{ reason: unknown; after: string }> = [];
let lastEnded = 'the start of the run';
let runEnded = false;

/** Mocha's listener re-emits each rejection to the others, so this one hears each twice. */
const seen = new WeakSet<Promise<unknown>>();
process.on('unhandledRejection', (reason, promise) => {
  if (seen.has(promise)) return;
  seen.add(promise);
  // Mocha's own errors (a `done` called twice) it forwards to its uncaught handler itself.
  const code = (reason as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('ERR_MOCHA_')) return;
  if (running) {
    leaked.set(running, [...(leaked.get(running) ?? []), reason]);
    return;
  }
  if (!runEnded) {
    between.push({ reason, after: lastEnded });
    return;
  }
  // Thrown from the listener, it leaves Node's rejection processing as an uncaught exception.
  throw unhandledRejectionError(reason);
});

/**
 * Every test and hook reports its end through the callback its `run` is given (a pass, a failure, a timeout,
 * an uncaught error alike); that callback is deferred one turn of the event loop, so a rejection from the
 * runnable's last tick surfaces while it is still the running one (Node reports them once the microtasks
 * drain), and a runnable that would pass fails instead with what went unhandled.
 */
const originalRun = Mocha.Runnable.prototype.run;
/** Milliseconds spent in each test file's tests and hooks. */
const fileMs = new Map<string, number>();
Mocha.Runnable.prototype.run = function (this: Mocha.Runnable, callback: (err?: unknown) => void) {
  // eslint-disable-next-line @typescript-eslint/no-this-alias -- the runnable is what a rejection is recorded against
  running = this;
  const before = between;
  between = [];
  const started = performance.now();
  return originalRun.call(this, (err?: unknown) => {
    const file = this.file ?? this.parent?.file;
    if (file) fileMs.set(file, (fileMs.get(file) ?? 0) + performance.now() - started);
    setImmediate(() => {
      if (running === this) running = null;
      lastEnded = this.fullTitle();
      const reasons = leaked.get(this) ?? [];
      leaked.delete(this);
      if (err) {
        // One that failed otherwise (a timeout) still names what went unhandled while it ran.
        for (const reason of [...before.map((b) => b.reason), ...reasons]) {
          process.stderr.write(`    [hooks] ${unhandledRejectionError(reason).stack}\n`);
        }
        callback(err);
      } else if (before.length) {
        callback(unhandledRejectionError(before[0]!.reason, ` (it surfaced after "${before[0]!.after}" ended, before this started)`));
      } else if (reasons.length) {
        callback(unhandledRejectionError(reasons[0], reasons.length > 1 ? ` (and ${reasons.length - 1} more)` : ''));
      } else {
        callback();
      }
    });
  });
};

function describeHandle(h: any): string {
  const where = openedBy.get(h);
  return where ? `${handleKind(h)}, opened at ${where}` : handleKind(h);
}

function handleKind(h: any): string {
  const type = h?.constructor?.name ?? typeof h;
  if (type === 'Socket' || type === 'TLSSocket') {
    if (h.remotePort) return `${type} ${h.localAddress}:${h.localPort} -> ${h.remoteAddress}:${h.remotePort}`;
    if (h.fd !== undefined && h.fd <= 2) return `${type} stdio fd ${h.fd}`;
    return `${type}${h._handle?.fd !== undefined ? ` fd ${h._handle.fd}` : ''}`;
  }
  if (type === 'Server') return `Server ${JSON.stringify(h.address?.())}`;
  if (type === 'ChildProcess') return `ChildProcess ${h.pid} ${h.spawnargs?.join(' ').slice(0, 200)}`;
  if (type === 'Timeout') return `Timeout ${h._idleTimeout} ms: ${String(h._onTimeout).replace(/\s+/g, ' ').slice(0, 200)}`;
  return type;
}

export const mochaHooks = {
  beforeEach(this: Mocha.Context) {
    current = this.currentTest ?? null;
  },
  afterEach(this: Mocha.Context) {
    const test = this.currentTest ?? null;
    current = null;
    if (!test || test.state === 'passed') return;
    for (const t of tracked) {
      if (t.test === test && alive(t.child)) {
        process.stderr.write(`    [hooks] killing ${t.child.pid} (${t.command}), started by the ${test.state ?? 'unfinished'} test "${test.fullTitle()}"\n`);
        killTree(t.child);
      }
    }
  },
};

/** After every suite and every root `after` hook (a shared cluster stops in one). */
export function mochaGlobalTeardown(): void {
  runEnded = true;
  printSlowest(15);
  if (between.length) {
    for (const { reason, after } of between) {
      process.stderr.write(`[hooks] after "${after}" ended, the run's last: ${unhandledRejectionError(reason).stack}\n`);
    }
    process.exitCode = 1;
    process.on('exit', () => {
      process.exitCode = 1;
    });
  }
  const left = killAll();
  for (const t of left) process.stderr.write(`[hooks] a child outlived the run, killed: ${t.child.pid} ${t.command}\n`);
  // The run is not forced to exit (.mocharc.json has no `exit`): what still holds the process is a leak to name.
  const timer = setTimeout(() => {
    timerHook.disable();
    const handles = ((process as any)._getActiveHandles() as unknown[]).map(describeHandle).filter((d) => !/stdio fd/.test(d));
    const timers = [...lateTimers].map(([stack, n]) => `  ${n} timer(s) set after the run ended, at\n      ${stack || '(no frames outside node)'}`);
    process.stderr.write(
      `[hooks] the run did not end ${CLOSE_GRACE_MS / 1000} s after its last suite; what holds it open:\n${[...handles.map((h) => `  ${h}`), ...[...openRedis.values()].map((r) => `  ${r}`), ...heldByTimers(), ...timers].join('\n')}\n  resources: ${process.getActiveResourcesInfo().join(', ')}\n`,
    );
    // Mocha sets the exit code from its failures in an 'exit' listener; this one, added later, runs after it.
    process.on('exit', () => {
      process.exitCode = 1;
    });
    process.exit(1);
  }, CLOSE_GRACE_MS);
  timer.unref();
  timerHook.enable();
}

/** The files whose tests and hooks took longest, with the run's total. */
function printSlowest(n: number): void {
  const total = [...fileMs.values()].reduce((a, b) => a + b, 0);
  if (fileMs.size < 2) return;
  const rows = [...fileMs].sort((a, b) => b[1] - a[1]).slice(0, n);
  const cwd = `${process.cwd()}/`;
  process.stderr.write(`[hooks] the ${rows.length} slowest of ${fileMs.size} test files (${(total / 1000).toFixed(0)} s in tests and hooks):\n`);
  for (const [file, ms] of rows) process.stderr.write(`  ${(ms / 1000).toFixed(1).padStart(7)} s  ${file.replace(cwd, '')}\n`);
}
