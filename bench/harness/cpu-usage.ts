/**
 * Who else used the CPU while we measured. This machine is shared (other work runs its test suites
 * beside the bench), and a measurement taken while something else ran is not one. Over an interval, the
 * busy time of the whole machine (/proc/stat) minus the CPU time of the bench's own processes
 * (/proc/<pid>/stat) is the "foreign" load, in cores; a load run under more than a little is re-run once
 * and, if still contended, flagged in the report. Linux only; elsewhere it reports nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

export const HZ = 100; // USER_HZ: /proc reports clock ticks of 10 ms on Linux

function machineBusyTicks(): number | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return total - cpu[3]! - cpu[4]!; // less idle and iowait
  } catch {
    return null;
  }
}

/** CPU time (user + system, all threads) a process has used, in clock ticks of 10 ms. */
export function processTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15)
  } catch {
    return 0;
  }
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

  /** Starts an interval; the returned function ends it and gives the foreign load in cores (null if unknown). */
  start(): () => number | null {
    const busy0 = machineBusyTicks();
    const pids = this.#pids();
    const own0 = pids.reduce((a, p) => a + processTicks(p), 0);
    const t0 = performance.now();
    return () => {
      const busy1 = machineBusyTicks();
      if (busy0 === null || busy1 === null) return null;
      const own1 = pids.reduce((a, p) => a + processTicks(p), 0);
      const seconds = (performance.now() - t0) / 1000;
      if (seconds <= 0) return null;
      return Math.max(0, (busy1 - busy0 - (own1 - own0)) / HZ / seconds);
    };
  }

  /** Waits (up to `maxMs`) for a second in which others use less than `cores`; returns the last reading. */
  async quiet(cores: number, maxMs: number): Promise<number | null> {
    const deadline = Date.now() + maxMs;
    for (;;) {
      const stop = this.start();
      await new Promise((r) => setTimeout(r, 1000));
      const foreign = stop();
      if (foreign === null || foreign < cores || Date.now() > deadline) return foreign;
    }
  }
}
