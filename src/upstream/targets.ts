/**
 * A route's upstream as a gateway's load balancer sees it: one or several origins, each with a weight, a
 * passive outlier check (an origin that fails `ejection.consecutiveFailures` calls in a row is ejected for
 * `ejection.ejectMs`) and an optional active health check (a GET of `healthCheck.path` every
 * `healthCheck.intervalMs`; an answer under 500 is healthy). `order()` gives the origins to try for one
 * call: the available ones in a weighted random order (each pick weighted among those left), then, only
 * when none is available, every origin — a route whose origins all look down still tries them rather
 * than refusing outright (Envoy's "panic" mode). Failing over from one to the next is src/upstream/route.ts.
 *
 * The single-origin form of the configuration is a route with one origin of weight 1.
 */
import type { Origin } from './origin.js';
import { upstreamMetrics } from '../observe/metrics.js';

export interface HealthCheck {
  path: string;
  intervalMs: number;
  timeoutMs: number;
}

export interface Ejection {
  consecutiveFailures: number;
  ejectMs: number;
}

export const DEFAULT_EJECTION: Ejection = { consecutiveFailures: 3, ejectMs: 30_000 };

/** One origin of a route, and what the route knows of its health. */
export interface Target {
  readonly origin: Origin;
  /** Its name on receipts and metrics: `origins[i].name`, or `origin-<i+1>`. */
  readonly name: string;
  readonly weight: number;
  failures: number;
  ejectedUntil: number;
  /** The last active check's verdict (true when no check is configured). */
  healthy: boolean;
}

/**
 * What each origin's up gauge was last set to, by route and origin. A call's report sets the gauge again only
 * when its value changes: prom-client hashes the label set on every set (about 0.3 µs a call measured alone,
 * 0.4 to 2 % of the small call's profiles). Shared by every RouteUpstream (a reload makes new ones for the same routes), so the
 * gauge still reads what the last report of any of them found.
 */
const lastPublished = new Map<string, 0 | 1>();

export class RouteUpstream {
  readonly route: string;
  readonly targets: readonly Target[];
  readonly #ejection: Ejection;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    route: string,
    targets: Array<{ origin: Origin; name: string; weight: number }>,
    ejection: Ejection = DEFAULT_EJECTION,
    now: () => number = Date.now,
  ) {
    this.route = route;
    this.targets = targets.map((t) => ({ ...t, failures: 0, ejectedUntil: 0, healthy: true }));
    this.#ejection = ejection;
    this.#now = now;
    for (const t of this.targets) this.#publish(t);
  }

  /** The first origin (what a single-origin route has): its pool, path and key. */
  get primary(): Origin {
    return this.targets[0]!.origin;
  }

  available(t: Target): boolean {
    return t.healthy && t.ejectedUntil <= this.#now();
  }

  /** The origins to try for one call, in order (see the module's opening paragraph). */
  order(random: () => number = Math.random): Target[] {
    const up = this.targets.filter((t) => this.available(t));
    const pool = up.length > 0 ? up : [...this.targets];
    const out: Target[] = [];
    while (pool.length > 0) {
      const total = pool.reduce((n, t) => n + t.weight, 0);
      let r = random() * total;
      let i = 0;
      while (i < pool.length - 1 && r >= pool[i]!.weight) r -= pool[i++]!.weight;
      out.push(pool.splice(i, 1)[0]!);
    }
    return out;
  }

  /** A call's outcome on an origin: success resets its count; a run of failures ejects it for a while. */
  report(t: Target, ok: boolean): void {
    if (ok) {
      t.failures = 0;
    } else if (++t.failures >= this.#ejection.consecutiveFailures) {
      t.failures = 0;
      t.ejectedUntil = this.#now() + this.#ejection.ejectMs;
      upstreamMetrics.ejections.inc({ route: this.route, origin: t.name });
    }
    this.#publish(t);
  }

  /** Starts the active checks (timers unref'd: they never keep the process alive). */
  startHealthChecks(check: HealthCheck): void {
    const run = () => void Promise.all(this.targets.map((t) => this.#probe(t, check)));
    run();
    this.#timer = setInterval(run, check.intervalMs);
    this.#timer.unref();
  }

  async #probe(t: Target, check: HealthCheck): Promise<void> {
    const path = `${t.origin.chatPath.replace(/\/chat\/completions$/, '')}${check.path}`;
    const headers: Record<string, string> = t.origin.authorization ? { authorization: t.origin.authorization } : {};
    try {
      const res = await t.origin.pool.request({
        method: 'GET',
        path,
        headers,
        headersTimeout: check.timeoutMs,
        bodyTimeout: check.timeoutMs,
        signal: AbortSignal.timeout(check.timeoutMs),
      });
      await res.body.dump();
      t.healthy = res.statusCode < 500;
    } catch {
      t.healthy = false;
    }
    this.#publish(t);
  }

  #publish(t: Target): void {
    const up = this.available(t) ? 1 : 0;
    const key = `${this.route}\u0000${t.name}`;
    if (lastPublished.get(key) === up) return;
    lastPublished.set(key, up);
    upstreamMetrics.originUp.set({ route: this.route, origin: t.name }, up);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(this.targets.map((t) => t.origin.pool.close()));
  }
}
