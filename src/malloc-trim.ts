/**
 * Giving malloc's free holes back to the system, on a timer off the request path.
 *
 * Large request bodies (their chunks, the joined body, the upstream bytes, the socket reads) are malloc'd
 * Buffers that V8 frees when it collects them, in any order, so glibc's main arena is left with tens of MiB of
 * free holes that it never returns: it gives back only the top of a heap, and the middle only when the process
 * calls `malloc_trim`, which Node never does (bench/README.md, Memory: 28 MiB came back at once after 100 KB
 * calls). So every gateway process calls `malloc_trim(0)` once it has started and then every
 * `PORTCULLIS_MALLOC_TRIM_SECONDS` (10 by default; 0 turns it off). One call held the main thread 0.5–1.3 ms
 * after 100 KB calls (more on a machine busy enough to deschedule it), and what a busy process needs again it
 * faults back in (about 30 more page faults per 100 KB call at 40 a second, about 1 % of its CPU); both are in
 * bench/README.md.
 *
 * The call lives in the intent encoder's Node-API binding (scripts/intent-encoder/addon.c, `trim`), the one
 * native module the gateway builds, installed by `npm start`, `npm run setup` and the image whether or not
 * the intent model is configured; loading it maps its code and nothing else (the weights are loaded only by
 * the model's workers). Where it is not installed, or is an older build without `trim`, or the C library is
 * not glibc, the gateway runs as before and /metrics says so (`portcullis_malloc_trim_available` 0).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Counter, Gauge, Histogram } from 'prom-client';
import { encoderHome, modelsDir, readEncoderManifest } from './guard/model/encoder.js';
import { registry } from './observe/metrics.js';

/** malloc_trim(0): true when memory went back, false when none could, null when there is no glibc. */
export type TrimCall = () => boolean | null;

const trims = new Counter({
  name: 'portcullis_malloc_trims_total',
  help: 'Calls of malloc_trim(0) that gave free malloc memory back to the system ("released") or found none ("none").',
  labelNames: ['result'] as const,
  registers: [registry],
});
const seconds = new Histogram({
  name: 'portcullis_malloc_trim_duration_seconds',
  help: 'Time one malloc_trim(0) call held the main thread.',
  buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
  registers: [registry],
});
const available = new Gauge({
  name: 'portcullis_malloc_trim_available',
  help: "1 when this process gives malloc's free holes back on a timer (PORTCULLIS_MALLOC_TRIM_SECONDS), 0 when it cannot or is told not to.",
  // Under PORTCULLIS_WORKERS the scrape adds the workers' series up; 1 here means every worker trims.
  aggregator: 'min',
  registers: [registry],
});

/** The installed binding's exports, or null (not installed, or not loadable here). */
export function loadBinding(dir = modelsDir()): Record<string, unknown> | null {
  const addon = join(encoderHome(readEncoderManifest(), dir), 'e5.node');
  if (!existsSync(addon)) return null;
  try {
    return createRequire(import.meta.url)(addon) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** The installed binding's `trim`, or null (not installed, not loadable here, or built before it had one). */
export function loadTrim(binding = loadBinding()): TrimCall | null {
  return typeof binding?.['trim'] === 'function' ? (binding['trim'] as TrimCall) : null;
}

export interface Trimmer {
  /** Whether trims run (a binding with `trim`, glibc, and a period above 0). */
  readonly running: boolean;
  stop(): void;
}

/**
 * Trims once now (start-up's own garbage, collected just before, leaves holes too) and then every `seconds`,
 * on an unref'd timer, so it never keeps a stopping process up.
 */
export function startTrimmer(every: number, trim: TrimCall | null): Trimmer {
  const once = (): boolean | null => {
    const t0 = process.hrtime.bigint();
    const released = trim!();
    if (released === null) return null;
    seconds.observe(Number(process.hrtime.bigint() - t0) / 1e9);
    trims.inc({ result: released ? 'released' : 'none' });
    return released;
  };
  if (trim === null || every === 0 || once() === null) {
    available.set(0);
    return { running: false, stop: () => undefined };
  }
  available.set(1);
  const timer = setInterval(once, every * 1000);
  timer.unref();
  return { running: true, stop: () => clearInterval(timer) };
}
