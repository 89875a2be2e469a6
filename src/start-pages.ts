/**
 * The `node` executable's pages that only start-up used, out of RSS once the gateway serves.
 *
 * Start-up touches about 50 MiB of the executable (the module loader, the parser and compilers at their
 * busiest while some 1,600 modules load, ICU's tables, the dynamic symbol table), and the kernel keeps every
 * page a process touched in its page tables, counted in its RSS, until the machine runs short of memory.
 * Serving calls uses about two thirds of them (34 MiB after 100 KB calls and a soak). So once the gateway
 * serves, each process drops the executable's read-only file mappings from its page tables, once
 * (`unmapStartPages` in the intent encoder's Node-API binding, scripts/intent-encoder/addon.c, the binding
 * the malloc trim already loads: src/malloc-trim.ts). Nothing is lost: the pages are the file's own and stay
 * in the page cache; the ones serving uses come back on their first use, one minor fault each, once.
 * Measured in bench/README.md (the executable's start-up pages): 17 MiB less of the executable resident after
 * the soak, 5 ms once at start, and no CPU per call that the side by side could resolve.
 *
 * What it does not do: free memory at once. The pages stay in the page cache, one copy shared by every process
 * that runs the executable (the workers of PORTCULLIS_WORKERS too), and a cgroup's memory.current counts page
 * cache, so a container's accounting sees them until the kernel reclaims them. What shrinks is each process's
 * RSS (ps, a supervisor, the kernel's out-of-memory score), and pages no process maps are the first the
 * kernel reclaims.
 *
 * Where the binding is not installed or is an older build, or /proc/self/smaps cannot be read, nothing is
 * dropped and /metrics says 0.
 */
import { Gauge } from 'prom-client';
import { registry } from './observe/metrics.js';

/** The binding's call: the bytes that were resident in the pages it dropped, or null where it cannot look. */
export type UnmapCall = () => number | null;

const released = new Gauge({
  name: 'portcullis_start_pages_released_bytes',
  help: "Resident bytes of the node executable's read-only pages this process dropped from its page tables once it served (the ones serving uses come back on first use).",
  registers: [registry],
});

/** The installed binding's `unmapStartPages`, or null (not installed, or built before it had one). */
export function loadUnmap(binding: Record<string, unknown> | null): UnmapCall | null {
  return typeof binding?.['unmapStartPages'] === 'function' ? (binding['unmapStartPages'] as UnmapCall) : null;
}

/** Drops them once; the bytes (0 when it could not), also on /metrics. */
export function releaseStartPages(unmap: UnmapCall | null): number {
  const bytes = unmap?.() ?? 0;
  released.set(bytes);
  return bytes;
}
