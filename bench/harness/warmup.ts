/**
 * The one warm-up every R3 (and every other row) gets before a window whose figures are kept: 100 KB calls
 * first, then small ones, long enough for V8 to finish compiling the gateway's path. A fresh gateway keeps
 * compiling for about half a minute of load (Maglev, then TurboFan, on the one core it is pinned to), and
 * the 100 KB calls deoptimise some of what the small ones had optimised: so large first and small last,
 * the small part long. Until then a window measures the compiler and the code it has not yet replaced, not
 * the path (bench/README.md, "2026-11-28, the tail": the window sequence of a fresh gateway this rests on).
 *
 * `npm run bench` runs it once per row before the matrix and once per separate R3 start (the durability
 * rows, the worker counts, the profiles); bench/tail.ts runs it on its gateway (`--warmup` overrides the
 * small part's seconds, 0 to watch a cold gateway settle).
 */
import type { BodyTemplate } from './bodies.js';

export interface WarmUp {
  /** Seconds of 100 KB calls first. */
  largeSec: number;
  /** Seconds of small calls last. */
  smallSec: number;
}

/** The warm-up of a full run; the quick run keeps a token of it, to stay quick. */
export const FULL_WARMUP: WarmUp = { largeSec: 2, smallSec: 20 };
export const QUICK_WARMUP: WarmUp = { largeSec: 0.2, smallSec: 0.3 };

/**
 * Loads one target at saturation with `large` for `w.largeSec`, then with `small` for `w.smallSec`;
 * `load(body, seconds)` is the caller's own saturation run (so it counts CPU and contention its way).
 */
export async function warmUp(
  load: (body: BodyTemplate, seconds: number) => Promise<unknown>,
  bodies: { small: BodyTemplate; large: BodyTemplate },
  w: WarmUp,
): Promise<void> {
  if (w.largeSec > 0) await load(bodies.large, w.largeSec);
  if (w.smallSec > 0) await load(bodies.small, w.smallSec);
}
