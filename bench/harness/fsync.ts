/**
 * What an fsync costs on the disk Redis writes its append-only file to: the figure that `appendfsync always`
 * adds to every money write, and so the latency budget of R3 on an `always` Redis is "the everysec budget
 * plus this". Measured as Redis pays it: a small append to a file in Redis' own directory, then
 * fdatasync, many times over; the median and the 99th percentile are reported.
 */
import { closeSync, fdatasyncSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { summarise, type Percentiles } from './load.js';

export function measureFsync(dir: string, times = 200): Percentiles {
  const file = join(dir, 'bench-fsync-probe.aof');
  const fd = openSync(file, 'a');
  // About what one settlement script appends to the AOF.
  const record = Buffer.alloc(512, 0x2a);
  const ms = new Float64Array(times);
  try {
    for (let i = 0; i < times; i++) {
      writeSync(fd, record);
      const t0 = performance.now();
      fdatasyncSync(fd);
      ms[i] = performance.now() - t0;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  return summarise(ms);
}
