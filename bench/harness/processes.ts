/**
 * The bench's child processes: each server under test (and the mock upstream) runs in its own process,
 * optionally pinned to a core with `taskset`, and is read for readiness, memory and exit.
 *
 * Pinning (2 cores): the bench process itself — autocannon, the load generator — is pinned to core 0
 * with all its threads before it starts anything, so the mock upstream and redis-server, which it spawns,
 * inherit core 0; each server under test is started under `taskset -c 1`. Every row's server thus has one
 * core of its own (its GC and libuv threads too), and the harness (load generator + mock + Redis) the
 * other. Row R0 (the load generator straight to the mock) measures what that harness core can do.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface Pinning {
  enabled: boolean;
  /** Core of the load generator, the mock upstream and redis-server. */
  harnessCore: number | null;
  /** Core of the server under test. */
  serverCore: number | null;
  how: string;
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins this process (all threads) to core 0, so what it spawns from now on inherits core 0. */
export function pinSelf(wanted: boolean): Pinning {
  if (!wanted) return { enabled: false, harnessCore: null, serverCore: null, how: 'not pinned (--no-pin)' };
  if (process.platform !== 'linux' || availableParallelism() < 2 || !hasTaskset()) {
    return { enabled: false, harnessCore: null, serverCore: null, how: 'not pinned (needs Linux, taskset and 2 cores)' };
  }
  execFileSync('taskset', ['-a', '-cp', '0', String(process.pid)], { stdio: 'ignore' });
  return {
    enabled: true,
    harnessCore: 0,
    serverCore: 1,
    how: 'taskset: load generator (this process, all threads), mock upstream and redis-server on core 0; the server under test on core 1',
  };
}

export interface ServerProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Port it said it listens on (`listening <port>`), when it says so. */
  port: number | null;
  output(): string;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  name: string;
  /** The program to run (default: this Node); `args` follow it. */
  command?: string;
  args: string[];
  env?: Record<string, string | undefined>;
  cwd?: string;
  pin: Pinning;
  /** The cores to pin to when pinning is on, as taskset takes them (default: the server core). */
  cores?: string;
  /** How readiness is seen: a regex on stdout whose first group is the port, or a check to poll. */
  ready: RegExp | (() => Promise<boolean>);
  timeoutMs?: number;
}

const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export async function startServer(opts: SpawnOptions): Promise<ServerProcess> {
  const program = opts.command ?? process.execPath;
  const [cmd, args] = opts.pin.enabled ? ['taskset', ['-c', opts.cores ?? String(opts.pin.serverCore), program, ...opts.args]] : [program, opts.args];
  const child = spawn(cmd, args, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  let out = '';
  const keep = (c: Buffer) => {
    out += c.toString();
    if (out.length > 64_000) out = out.slice(-32_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  let port: number | null = null;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${opts.name} exited during start (${child.exitCode ?? child.signalCode}):\n${out.slice(-4000)}`);
    }
    if (opts.ready instanceof RegExp) {
      const m = opts.ready.exec(out);
      if (m) {
        port = m[1] ? Number(m[1]) : null;
        break;
      }
    } else if (await opts.ready()) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${opts.name} did not start in time:\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name: opts.name,
    child,
    pid: child.pid!,
    port,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    },
  };
}

export interface Memory {
  /** Resident set size now, MiB. */
  rssMiB: number;
  /** Peak resident set size since the process started (VmHWM), MiB. */
  peakMiB: number;
}

/** Reads a process' memory from /proc (Linux); null elsewhere or when it is gone. */
export function memoryOf(pid: number): Memory | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMiB: kb('VmRSS') / 1024, peakMiB: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Is something answering HTTP on this port (any status)? */
export async function httpAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}
