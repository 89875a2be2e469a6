/**
 * A worker's line to its supervisor (src/workers.ts) under `PORTCULLIS_WORKERS`: what one worker is asked
 * must sometimes be answered for all of them. An admin reload is asked of every worker and answered with
 * each worker's result; a /metrics scrape is answered with every worker's series added up (prom-client's
 * AggregatorRegistry, run by the supervisor). A single process (no cluster) answers both itself.
 *
 * Messages are plain objects on the cluster IPC channel, tagged `portcullis` so that prom-client's own
 * messages (and any other) pass by.
 */
import cluster from 'node:cluster';
import { randomUUID } from 'node:crypto';
import { AggregatorRegistry } from 'prom-client';
import type { ReloadResult } from './config/reloader.js';
import { registry } from './observe/metrics.js';
import { isLinkMessage, type LinkMessage, type WorkerReload } from './worker-messages.js';

export type { WorkerReload } from './worker-messages.js';

/** How long a worker waits for the supervisor's answer (a reload compiles a runtime in every worker). */
const ANSWER_MS = 30_000;

/** This worker's index (1..N), or 1 in a single process. */
export function workerIndex(): number {
  return Number(process.env['PORTCULLIS_WORKER_INDEX'] ?? '1') || 1;
}

/** True when this process is one of several workers and its supervisor answers for all of them. */
export function supervised(): boolean {
  return cluster.isWorker && typeof process.send === 'function';
}

/** Sends `message` to the supervisor and resolves with the answer of the same id. */
function ask<T extends LinkMessage>(message: LinkMessage, answer: T['portcullis']): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (!isLinkMessage(m) || m.portcullis !== answer || !('id' in m) || !('id' in message) || m.id !== message.id) return;
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve(m as T);
    };
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error(`the supervisor did not answer ${message.portcullis} within ${ANSWER_MS} ms`));
    }, ANSWER_MS);
    process.on('message', onMessage);
    process.send!(message);
  });
}

/** Asks the supervisor to reload every worker; resolves with each worker's result, by worker index. */
export async function reloadEveryWorker(reason: string): Promise<WorkerReload[]> {
  const done = await ask<Extract<LinkMessage, { portcullis: 'reload-all-done' }>>({ portcullis: 'reload-all', id: randomUUID(), reason }, 'reload-all-done');
  return done.workers;
}

/** The Prometheus text of every worker, added up by the supervisor. */
export async function clusterMetrics(): Promise<string> {
  const done = await ask<Extract<LinkMessage, { portcullis: 'metrics-done' }>>({ portcullis: 'metrics', id: randomUUID() }, 'metrics-done');
  if (done.text === undefined) throw new Error(done.error ?? 'the supervisor could not aggregate the metrics');
  return done.text;
}

/**
 * In a worker: answers the supervisor's reload requests with `reload` (this worker's holder), and lets
 * prom-client answer its metrics requests from this process's registry.
 */
export function answerSupervisor(reload: (reason: string) => Promise<ReloadResult>): void {
  if (!supervised()) return;
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // adds prom-client's worker-side listener for the supervisor's metrics requests
  process.on('message', (m: unknown) => {
    if (!isLinkMessage(m) || m.portcullis !== 'reload') return;
    void reload(m.reason).then((result) =>
      process.send!({ portcullis: 'reloaded', id: m.id, result: { worker: workerIndex(), pid: process.pid, ...result } } satisfies LinkMessage),
    );
  });
  // Only now does the supervisor include this worker in a reload: a request sent earlier would find no listener.
  process.send!({ portcullis: 'ready' } satisfies LinkMessage);
}
