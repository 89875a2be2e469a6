/**
 * Preloaded into a gateway by bench/tail.ts (`node --import`): records, in the gateway's own process, what can
 * hold a call up there — each garbage collection (kind, start, duration) and each time the event loop ran late
 * by more than 4 ms (a 2 ms timer that fired late: the loop was busy or the process was not scheduled), and the
 * event loop's delay as a histogram per half second (perf_hooks.monitorEventLoopDelay: p50, p99, max) — and
 * writes them as JSON lines to `<pid>.jsonl` in the folder TAIL_MONITOR_DIR names, times in ms since the epoch. No gateway code
 * is changed; the monitor costs one timer tick every 2 ms.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants, monitorEventLoopDelay, performance } from 'node:perf_hooks';

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
  // The event loop's delay as a distribution too (perf_hooks, sampled every millisecond), one line per
  // half second: its p50, p99 and max, and how many samples, so a window's share of delayed turns shows.
  const eld = monitorEventLoopDelay({ resolution: 1 });
  eld.enable();
  setInterval(() => {
    if (eld.count > 0)
      lines.push(
        JSON.stringify({
          t: 'eld',
          at: performance.timeOrigin + performance.now() - 500,
          span: 500,
          p50: eld.percentile(50) / 1e6,
          p99: eld.percentile(99) / 1e6,
          max: eld.max / 1e6,
          n: eld.count,
        }),
      );
    eld.reset();
  }, 500).unref();
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
