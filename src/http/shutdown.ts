/**
 * Graceful shutdown, in this order:
 *
 * 1. Readiness goes false (`/readyz` 503 `not-ready`), and answers carry `connection: close`, so a balancer
 *    stops sending and clients reconnect elsewhere.
 * 2. After `drainDelayMs` (time for the balancer to see it), every listener stops accepting connections;
 *    idle keep-alive connections are closed.
 * 3. Requests in flight and jobs running here get `graceMs` to finish. A job keeps its lease meanwhile.
 * 4. Then the caller's teardown runs: the job engine stops what still runs (its callers are answered 503
 *    `job-interrupted`, its reservation settled — nothing charged but what the upstream reported), the
 *    remaining connections are closed once answered, and the store closes last.
 *
 * A request is never answered twice and a job never run twice: a client that resends after a cut
 * connection gets the same job (its id is derived from the request), so it is not charged twice.
 */
import type { Server } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lifecycle } from './lifecycle.js';
import type { Logger } from '../log.js';

export const SHUTDOWN_DEFAULTS = { drainDelayMs: 0, graceMs: 30_000 };

export interface Drainable {
  lifecycle: Lifecycle;
  servers: Server[];
  /** Resolves true once no job runs on this instance, false at the timeout. */
  jobsIdle(timeoutMs: number): Promise<boolean>;
  log: Logger;
}

/** Steps 1 to 3; the caller tears down (step 4) when this resolves. */
export async function drain(d: Drainable, settings: { drainDelayMs?: number; graceMs?: number } = {}): Promise<void> {
  const { drainDelayMs, graceMs } = { ...SHUTDOWN_DEFAULTS, ...settings };
  const started = Date.now();
  d.lifecycle.drain();
  d.log.info('gateway.draining', { drainDelayMs, graceMs, inFlight: d.lifecycle.inFlight });
  if (drainDelayMs > 0) await sleep(drainDelayMs);
  // close() stops accepting and (Node 19+) closes idle keep-alive connections; busy ones end after their answer.
  const closed = d.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
  const deadline = Date.now() + graceMs;
  const requestsDone = await d.lifecycle.idle(graceMs);
  const jobsDone = await d.jobsIdle(Math.max(0, deadline - Date.now()));
  d.log.info('gateway.drained', { requestsDone, jobsDone, inFlight: d.lifecycle.inFlight, ms: Date.now() - started });
  void Promise.all(closed);
}
