/**
 * Who else used the CPU while we measured. This machine is shared (other work runs its test suites
 * beside the bench) and may be a virtual machine on a shared host, and a measurement taken while something
 * else ran is not one. Over an interval, the busy time of the whole machine (/proc/stat) minus the CPU time
 * of the bench's own processes (/proc/<pid>/stat) is the "foreign" load, and the machine's steal time what
 * the hypervisor took, both in cores; a load run that lost more than a little is re-run once and, if still
 * contended, flagged in the report. Linux only; elsewhere it reports nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const HZ = 100; // USER_HZ: /proc reports clock ticks of 10 ms on Linux

/** Machine-wide ticks: busy (user, nice, system, irq, softirq) and stolen by the hypervisor. */
function machineTicks(): { busy: number; steal: number } | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return { busy: cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]!, steal: cpu[7] ?? 0 };
  } catch {
    return null;
  }
}

/**
 * CPU the bench did not get, in cores: `foreign`, what other processes of this machine used, plus `steal`,
 * what the hypervisor gave to other virtual machines while ours wanted to run (on a shared host the larger
 * part, and one no process list shows).
 */
export interface Contention {
  foreign: number;
  steal: number;
}

/** utime + stime (fields 14 and 15) of a /proc `stat` line, a process's or a thread's, in clock ticks. */
function statTicks(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU time (user + system, all threads) a process has used, in clock ticks of 10 ms. */
export function processTicks(pid: number): number {
  try {
    return statTicks(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return 0;
  }
}

/**
 * CPU ticks of each thread of a process, added up by thread name (/proc/<pid>/task/<tid>: `node` is the main
 * thread, `V8 DefaultWorke` V8's background pool (GC, compilers), `libuv-worker` the thread pool, a worker
 * thread its own name): which part of the process a per-call figure comes from.
 */
export function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(name, (out.get(name) ?? 0) + statTicks(stat));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The pid of the redis-server listening on `port` (its command line reads `redis-server 127.0.0.1:<port>`). */
export function findRedisPid(port: number): number | null {
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes('redis-server') && cmd.includes(`:${port}`)) return Number(d);
    } catch {
      /* gone */
    }
  }
  return null;
}

export class CpuWatch {
  readonly #pids: () => number[];
  constructor(pids: () => number[]) {
    this.#pids = pids;
  }

  /** Starts an interval; the returned function ends it and says what the bench did not get (null if unknown). */
  start(): () => Contention | null {
    const m0 = machineTicks();
    const pids = this.#pids();
    const own0 = pids.reduce((a, p) => a + processTicks(p), 0);
    const t0 = performance.now();
    return () => {
      const m1 = machineTicks();
      if (m0 === null || m1 === null) return null;
      const own1 = pids.reduce((a, p) => a + processTicks(p), 0);
      const seconds = (performance.now() - t0) / 1000;
      if (seconds <= 0) return null;
      const cores = (ticks: number) => Math.max(0, ticks / HZ / seconds);
      return { foreign: cores(m1.busy - m0.busy - (own1 - own0)), steal: cores(m1.steal - m0.steal) };
    };
  }

  /** Waits (up to `maxMs`) for a second in which the bench loses less than `cores`; returns the last reading. */
  async quiet(cores: number, maxMs: number): Promise<Contention | null> {
    const deadline = Date.now() + maxMs;
    for (;;) {
      const stop = this.start();
      await new Promise((r) => setTimeout(r, 1000));
      const c = stop();
      if (c === null || c.foreign + c.steal < cores || Date.now() > deadline) return c;
    }
  }
}
