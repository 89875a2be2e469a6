/**
 * Preloaded into a gateway by bench/tail.ts (`node --import`): records, in the gateway's own process, what can
 * hold a call up there — each garbage collection (kind, start, duration) and each time the event loop ran late
 * by more than 4 ms (a 2 ms timer that fired late: the loop was busy or the process was not scheduled) — and
 * writes them as JSON lines to `<pid>.jsonl` in the folder TAIL_MONITOR_DIR names, times in ms since the epoch. No gateway code
 * is changed; the monitor costs one timer tick every 2 ms.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

const dir = process.env['TAIL_MONITOR_DIR'];
if (dir) {
  const file = join(dir, `${process.pid}.jsonl`);
  const lines = [];
  const flush = () => {
    if (lines.length) appendFileSync(file, lines.splice(0).join('\n') + '\n');
  };
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      lines.push(JSON.stringify({ t: 'gc', kind: kinds[e.detail?.kind] ?? String(e.detail?.kind), at: performance.timeOrigin + e.startTime, ms: e.duration }));
    }
  }).observe({ entryTypes: ['gc'] });
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const late = now - last - 2;
    if (late > 4) lines.push(JSON.stringify({ t: 'late', at: performance.timeOrigin + last + 2, ms: late }));
    last = now;
  }, 2).unref();
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
