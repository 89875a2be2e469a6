/**
 * A log line that any client can cause (a dropped connection, a malformed request head) must not let that
 * client flood the log: such events go through a small per-event budget. At most `perWindow` lines per event
 * name are written per window; the rest are counted, and the next line written carries how many were
 * suppressed, so an operator still sees the volume.
 */
import type { Level, Logger } from '../log.js';

export interface QuietLog {
  (level: Level, event: string, fields: Record<string, unknown>): void;
}

export function quietLog(log: Logger, perWindow = 10, windowMs = 10_000, now: () => number = Date.now): QuietLog {
  const budgets = new Map<string, { windowStart: number; written: number; suppressed: number }>();
  return (level, event, fields) => {
    const t = now();
    let b = budgets.get(event);
    if (!b || t - b.windowStart >= windowMs) {
      b = { windowStart: t, written: 0, suppressed: b?.suppressed ?? 0 };
      budgets.set(event, b);
    }
    if (b.written >= perWindow) {
      b.suppressed++;
      return;
    }
    b.written++;
    const extra = b.suppressed > 0 ? { suppressed: b.suppressed } : {};
    b.suppressed = 0;
    log[level](event, { ...fields, ...extra });
  };
}
