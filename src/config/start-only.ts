/**
 * Settings read once, at start: a reload compiles them but cannot apply them, because what they configure
 * was built when the process started (bound listeners, the store connection, the receipt log's key and
 * name, the listener bounds, the shutdown timings handed to the signal handler, the demo bootstrap). A
 * reload that changes one still applies everything else, and reports the change as "needs restart" rather
 * than "applied" — silently accepting it would let an operator believe it took effect. docs/operators.md
 * lists the same keys (test/config/reload-honesty.test.ts holds the two together).
 */
import { isDeepStrictEqual } from 'node:util';
import type { GatewayDoc } from './types.js';

/** Top-level keys of config/gateway.yaml whose changes need a restart. */
export const START_ONLY_KEYS = ['principalDomain', 'listeners', 'store', 'http', 'shutdown', 'receipts', 'demo', 'admin'] as const;

/**
 * The settings under START_ONLY_KEYS that differ between what the process started with and what a reload
 * read, as dotted paths to the leaves that changed (`shutdown.drainDelayMs`), sorted.
 */
export function startOnlyChanges(started: GatewayDoc, next: GatewayDoc): string[] {
  const changed: string[] = [];
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (isDeepStrictEqual(a, b)) return;
    const objects = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
    if (objects(a) && objects(b)) {
      for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[key], b[key], `${path}.${key}`);
    } else {
      changed.push(path);
    }
  };
  for (const key of START_ONLY_KEYS) walk((started as unknown as Record<string, unknown>)[key], (next as unknown as Record<string, unknown>)[key], key);
  return changed.sort();
}
