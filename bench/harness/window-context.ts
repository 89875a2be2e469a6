/**
 * What happened around a latency window, for reading its p99: one 3-second window at half load holds about
 * 2,000 answers, so its p99 is the 20 slowest, and a single pause of some tens of milliseconds anywhere on
 * the path sets it. Read before and after the window, never during it, so the measured process does no extra
 * work while it is measured:
 *
 * - the gateway's own figures from its admin /metrics (prom-client's default metrics): garbage-collection
 *   pauses over 10 ms by kind (`nodejs_gc_duration_seconds`), and the event loop's largest delay over the
 *   window (`nodejs_eventloop_lag_max_seconds`, which prom-client resets at each scrape, so the scrape
 *   before the window starts it afresh);
 * - Redis' INFO: forks (each an AOF rewrite here: RDB snapshots are off; Redis starts one by itself when
 *   the AOF has doubled since the last, from 64 MiB), the last fork's duration (the main thread is stopped
 *   for it), and a rewrite still running.
 */
import { createClient } from 'redis';

export interface WindowContext {
  /** Collections that paused the gateway for more than 10 ms, by kind (major, minor, incremental, weakcb). */
  gcOver10ms: Record<string, number>;
  /** The event loop's largest delay over the window, ms (prom-client's 10 ms resolution); null if unknown. */
  loopDelayMaxMs: number | null;
  /** Redis forks (AOF rewrites) that began during the window. */
  redisForks: number;
  /** The last fork's duration (ms), when there was one. */
  lastForkMs: number | null;
  /** An AOF rewrite was running when the window began or ended. */
  rewriting: boolean;
}

interface Reading {
  gcOver10ms: Record<string, number>;
  forks: number;
  rewriting: boolean;
}

function gcOver10ms(metrics: string): Record<string, number> {
  const count: Record<string, number> = {};
  const upTo10: Record<string, number> = {};
  for (const m of metrics.matchAll(/^\w*nodejs_gc_duration_seconds_(bucket|count)\{([^}]*)\} (\S+)$/gm)) {
    const labels = m[2]!;
    const kind = /kind="([^"]+)"/.exec(labels)?.[1] ?? '?';
    if (m[1] === 'count') count[kind] = Number(m[3]);
    else if (/le="0\.01"/.test(labels)) upTo10[kind] = Number(m[3]);
  }
  return Object.fromEntries(Object.keys(count).map((k) => [k, count[k]! - (upTo10[k] ?? 0)]));
}

async function scrape(adminUrl: string, adminToken: string): Promise<string> {
  const res = await fetch(`${adminUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } });
  return res.text();
}

async function redisInfo(redisUrl: string): Promise<string> {
  const c = createClient({ url: redisUrl });
  await c.connect();
  try {
    return await c.info();
  } finally {
    await c.quit();
  }
}

const num = (info: string, key: string) => Number(new RegExp(`^${key}:(\\S+)`, 'm').exec(info)?.[1] ?? Number.NaN);

/**
 * Rewrites Redis' AOF now and waits until the rewrite is over (at most `capMs`): a p99 window that follows
 * starts on a fresh AOF base, which must double before Redis starts the next rewrite by itself, so no rewrite
 * child runs during the window. On the bench's two cores that child shares the harness core with Redis, the
 * load generator and the mock, and with a rewrite running R3's p50 and p99 at half load rose several-fold
 * (`bench/tail.ts --rewrite-at`, bench/README.md): a figure of the harness, not of the gateway. Returns the
 * milliseconds waited.
 */
export async function rewriteAofFirst(redisUrl: string, capMs = 60_000): Promise<number> {
  const c = createClient({ url: redisUrl });
  await c.connect();
  const t0 = performance.now();
  try {
    // Already rewriting (Redis then refuses a second) is as good: it is waited for below.
    await c.bgRewriteAof().catch(() => undefined);
    while (performance.now() - t0 < capMs) {
      const info = await c.info('persistence');
      if (num(info, 'aof_rewrite_in_progress') === 0 && num(info, 'aof_rewrite_scheduled') === 0) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    return performance.now() - t0;
  } finally {
    await c.quit();
  }
}

/** Reads the starting point; `end()` after the window gives what happened in between. */
export async function watchWindow(gw: { adminUrl: string; adminToken: string }, redisUrl: string): Promise<{ end(): Promise<WindowContext> }> {
  const info0 = await redisInfo(redisUrl);
  const start: Reading = {
    gcOver10ms: gcOver10ms(await scrape(gw.adminUrl, gw.adminToken)),
    forks: num(info0, 'total_forks'),
    rewriting: num(info0, 'aof_rewrite_in_progress') === 1,
  };
  return {
    async end(): Promise<WindowContext> {
      const metrics = await scrape(gw.adminUrl, gw.adminToken);
      const info = await redisInfo(redisUrl);
      const gc = gcOver10ms(metrics);
      const lag = /^\w*nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1];
      const forks = num(info, 'total_forks') - start.forks;
      return {
        gcOver10ms: Object.fromEntries(Object.entries(gc).map(([k, v]) => [k, v - (start.gcOver10ms[k] ?? 0)])),
        loopDelayMaxMs: lag === undefined ? null : Number(lag) * 1000,
        redisForks: forks,
        lastForkMs: forks > 0 ? num(info, 'latest_fork_usec') / 1000 : null,
        rewriting: start.rewriting || num(info, 'aof_rewrite_in_progress') === 1,
      };
    },
  };
}

/** One line for the report: "2 GC pauses over 10 ms (major 1, minor 1), loop delayed at most 23 ms, 1 Redis fork (12.0 ms)". */
export function describeContext(c: WindowContext): string {
  const gcs = Object.entries(c.gcOver10ms).filter(([, n]) => n > 0);
  const total = gcs.reduce((s, [, n]) => s + n, 0);
  const parts = [
    total === 0 ? 'no GC pause over 10 ms' : `${total} GC pause${total > 1 ? 's' : ''} over 10 ms (${gcs.map(([k, n]) => `${k} ${n}`).join(', ')})`,
    c.loopDelayMaxMs === null ? 'event loop delay unknown' : `event loop delayed at most ${c.loopDelayMaxMs.toFixed(1)} ms`,
    c.redisForks === 0
      ? c.rewriting
        ? 'an AOF rewrite running in Redis'
        : 'no AOF rewrite in Redis'
      : `${c.redisForks} Redis fork${c.redisForks > 1 ? 's' : ''} (AOF rewrite; last fork ${c.lastForkMs?.toFixed(1)} ms)`,
  ];
  return parts.join(', ');
}
