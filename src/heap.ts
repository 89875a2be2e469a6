/**
 * How far V8 lets the old generation grow between two full collections, set once at start.
 *
 * By default V8 sets the next full-collection limit at up to 4× the live heap when collecting is cheap next
 * to running, and for the gateway it is: every call allocates (bodies, JSON, promises) and most of it dies
 * young, so the collector is fast and the limit climbs to the maximum. Under load the live heap after a full
 * collection is about 60 MiB, yet the heap grew to about 260 MiB before each one and RSS swung between 270 and
 * 350 MiB (`npx tsx bench/memory.ts --node-flags=--trace-gc`). At 1.5× the live heap the heap stays near
 * 100 MiB; a full collection then comes every few seconds instead of every ten, each about 10 ms of
 * (mostly incremental) marking, which the bench's CPU per call does not show beyond its noise.
 *
 * This only moves when collections happen, never how large the heap may become (the old-space maximum is
 * V8's own, or --max-old-space-size), so a legitimately larger live heap still fits: the limit follows it.
 * An operator's own --heap-growing-percent (on the command line or in NODE_OPTIONS) is left as it is.
 *
 * The young generation's size cannot be set this way (below).
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ConfigError } from './config/documents.js';

export const HEAP_GROWING_PERCENT = 50;

/**
 * V8's young generation, set where a gateway process starts, since V8 reads it only when it creates the heap
 * (`v8.setFlagsFromString` afterwards has no effect): each of its two halves (semi-spaces) at most 32 MiB.
 * Node 24 sizes it from the machine's memory (64 MiB halves on a 24 GiB machine, 8 or 16 in a container with
 * a small memory limit), and every call's garbage passes through it, so under load it is resident in full.
 * At 32 the scavenges stayed as cheap as at 64 (the same CPU per call at saturation and at a fixed rate), and
 * RSS after a soak fell by 64-77 MiB; at 16 each call cost a fifth more CPU (docs/operators.md, Memory).
 * `npm start`, the container image and the systemd unit put it in NODE_OPTIONS before Node starts; the
 * supervisor of several workers gives it to each worker it forks (src/workers.ts).
 */
export const SEMI_SPACE_FLAG = '--max-semi-space-size=32';

/**
 * The node flags for a process the gateway starts itself (a worker): its own, plus the young generation's
 * size unless the operator chose one (on the command line or in NODE_OPTIONS, which the worker inherits).
 */
export function workerExecArgv(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): string[] {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => /^--max[-_]semi[-_]space[-_]size\b/.test(a));
  return given ? [...execArgv] : [...execArgv, SEMI_SPACE_FLAG];
}

export function setHeapGrowth(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): boolean {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => /^--heap[-_]growing[-_]percent\b/.test(a));
  if (!given) v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return !given;
}

/**
 * One full collection once start-up is done. The growth set above applies from the next full collection on;
 * until then the limit is V8's initial one, far above what the gateway keeps, and the first minute of load
 * grew RSS to about 240 MiB before the first collection brought it to 176 (bench/memory.ts). Collecting once
 * here drops the start-up's garbage (config, policy, site documents) and sets the limit from the live heap.
 * `gc` is reached the documented way V8 exposes it (--expose-gc), in a context of its own so that the
 * gateway's global scope does not gain a `gc`.
 */
export function settleHeap(): void {
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** How often a serving process gives malloc's free holes back (src/malloc-trim.ts), unless told otherwise. */
export const DEFAULT_TRIM_SECONDS = 10;

/**
 * PORTCULLIS_MALLOC_TRIM_SECONDS: a whole number of seconds, 0 for off. Read here, before anything starts, so
 * that a wrong value stops the start with one line (a ConfigError) rather than after the gateway is up.
 */
export function trimSeconds(env: Record<string, string | undefined> = process.env): number {
  const raw = env['PORTCULLIS_MALLOC_TRIM_SECONDS'];
  if (raw === undefined || raw === '') return DEFAULT_TRIM_SECONDS;
  if (!/^\d{1,5}$/.test(raw)) throw new ConfigError([`PORTCULLIS_MALLOC_TRIM_SECONDS must be a whole number of seconds (0 turns the trim off), not "${raw}"`]);
  return Number(raw);
}
