/**
 * Several cores: `PORTCULLIS_WORKERS=N` (or `auto`, one per core) runs N gateway processes that share every
 * listener's port through node:cluster; the default, 1, is the single process it always was. The primary
 * process serves nothing itself: it forks the workers (each one runs main.ts as usual), passes them one
 * operator token, forwards SIGHUP (reload) and SIGINT/SIGTERM (graceful stop) to them, replaces a worker
 * that dies while serving, and exits once they have all stopped. It also answers for all of them what one
 * is asked (src/worker-link.ts): an admin reload is run in every worker and answered with each one's
 * result, and a /metrics scrape is answered with every worker's series added up (prom-client's
 * AggregatorRegistry, made for node:cluster).
 *
 * Why the memory store is refused with N > 1: each worker would hold its own store, so a token issued on one
 * would be unknown on the next and the money of one principal would be counted N times. Redis is shared.
 *
 * main.ts starts `superviseWorkers` as one part of its services list (src/app/services.ts), after the local
 * data the workers use: in the primary of an N > 1 run it returns the running supervisor, whose stop (SIGINT or
 * SIGTERM to the process, through the list) stops every worker gracefully and resolves once they are gone, so
 * what was started before it (the local redis-server) stops after the workers, never under them. In a worker,
 * or with one worker asked for, it returns null and main.ts serves.
 */
import { newDataKey } from './data-key/keyring.js';
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from './config/load.js';
import { ConfigError } from './config/documents.js';
import { HOST_NAMES } from './config/types.js';
import { workerExecArgv } from './heap.js';
import type { Logger } from './log.js';
import { isLinkMessage, type LinkMessage, type WorkerReload } from './worker-messages.js';

type Env = Record<string, string | undefined>;

/** How long a stopping worker may take to finish its calls and close before it is killed. */
const STOP_GRACE_MS = 30_000;
/** A worker that dies within this long of starting to serve is replaced after RESPAWN_DELAY_MS, not at once. */
const STEADY_MS = 10_000;
const RESPAWN_DELAY_MS = 1_000;
/** A replacement that fails to start is tried again after this, doubling each time up to RETRY_MAX_MS. */
const RETRY_MAX_MS = 60_000;
/** How long the supervisor waits for every worker's reload result before answering with those it has. */
const RELOAD_ANSWER_MS = 25_000;
/** The exit code main.ts uses for a configuration error (EX_CONFIG). */
const EX_CONFIG = 78;

/**
 * `PORTCULLIS_WORKERS`: unset or empty = 1, `auto` = the cores this process may use (os.availableParallelism:
 * the CPU affinity mask, so `taskset -c 0,1` or a container's cpuset of 2 cores gets 2; a CPU quota is not
 * seen), else a whole number 1..256.
 */
export function workerCount(env: Env): number {
  const raw = env['PORTCULLIS_WORKERS']?.trim();
  if (!raw) return 1;
  if (raw === 'auto') return availableParallelism();
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > 256) {
    throw new ConfigError([`PORTCULLIS_WORKERS must be a whole number from 1 to 256, or "auto" (one per core); it is "${raw}"`]);
  }
  return Number(raw);
}

/**
 * Refuses N > 1 on a store that is not shared between processes. Reads the configuration as the workers
 * will (files plus environment), so REDIS_URL counts.
 */
export function checkWorkers(count: number, root: string, env: Env): void {
  if (count <= 1) return;
  const kind = loadConfig(root, env).gateway.data.store.kind;
  if (kind !== 'redis') {
    throw new ConfigError([
      `PORTCULLIS_WORKERS=${env['PORTCULLIS_WORKERS']} asks for ${count} worker processes, but the store is "${kind}": each worker would have its own, unshared store (tokens, balances, jobs). Use the Redis store (store.kind: redis in config/gateway.yaml, or REDIS_URL), or one worker.`,
    ]);
  }
}

export interface SuperviseOptions {
  root: string;
  log: Logger;
  env?: Env;
}

/** The running workers, as the primary process sees them. */
export interface Workers {
  /** Resolves with the process's exit code once every worker has stopped, for whatever reason. */
  readonly done: Promise<number>;
  /** Stops every worker gracefully (SIGTERM; SIGKILL past the grace); resolves as `done` does. */
  stop(reason?: string): Promise<number>;
}

/**
 * In a worker, or with one worker asked for: returns null, and the caller serves. In the primary with N > 1:
 * forks the workers and returns them. Throws ConfigError for a bad count or an unshared store.
 */
export function superviseWorkers(opts: SuperviseOptions): Workers | null {
  if (cluster.isWorker) return null;
  const env = opts.env ?? process.env;
  const count = workerCount(env);
  if (count <= 1) return null;
  checkWorkers(count, opts.root, env);
  const supervisor = new Supervisor(count, opts.log, env);
  supervisor.start();
  return supervisor;
}

/**
 * Whether every worker has exited. Not `cluster.workers` being empty: cluster drops a worker from it on
 * whichever of its exit and its IPC channel's close comes last, so when the exit comes first (seen under
 * load) the last worker is still listed as it exits, and a stop waiting for an empty list waited forever.
 */
const noneAlive = (): boolean => Object.values(cluster.workers ?? {}).every((w) => !w || w.isDead());

class Supervisor implements Workers {
  readonly #count: number;
  readonly #log: Logger;
  readonly done: Promise<number>;
  #finish: (code: number) => void = () => undefined;
  readonly #workerEnv: Env;
  /** Listeners each worker (by cluster id) has bound: it serves once it has bound them all. */
  readonly #listening = new Map<number, number>();
  /** When each worker (by cluster id) had bound all its listeners. */
  readonly #servingSince = new Map<number, number>();
  /** Workers (by cluster id) that answer the supervisor's requests (they said `ready`). */
  readonly #answering = new Set<number>();
  #stopping = false;
  #exitCode = 0;
  /** Whether worker 1 has been forked once (it bootstraps the demo; nobody else, and not its replacements). */
  #demoIssued = false;
  /** True once any worker has served: from then on a worker that fails to start never stops the others. */
  #served = false;
  /** The next delay before retrying a worker (by index) that failed to start. */
  readonly #retryMs = new Map<number, number>();
  /** Where the workers keep the last good configuration (src/config/last-good.ts), removed at exit. */
  readonly #lastGood: string;

  constructor(count: number, log: Logger, env: Env) {
    this.#count = count;
    this.#log = log;
    this.done = new Promise((resolve) => (this.#finish = resolve));
    // One operator token for all workers: each would otherwise generate its own, and the one printed would
    // work on a single worker's connections only.
    this.#workerEnv = env['PORTCULLIS_ADMIN_TOKEN']
      ? {}
      : { PORTCULLIS_ADMIN_TOKEN: `pcl_admin_${randomBytes(24).toString('base64url')}`, PORTCULLIS_ADMIN_TOKEN_GENERATED: '1' };
    // Workers must share one data key, or what one seals (a TOTP secret) would not open on the next: without
    // a configured key, the supervisor makes one for this run and hands it to all of them.
    if (!env['PORTCULLIS_DATA_KEY'] && !env['PORTCULLIS_DATA_KEY_FILE']) this.#workerEnv['PORTCULLIS_DATA_KEY'] = newDataKey();
    // A replacement worker starts on what the running workers serve, not on a refused edit on disk.
    this.#lastGood = mkdtempSync(join(tmpdir(), 'portcullis-last-good-'));
    this.#workerEnv['PORTCULLIS_LAST_GOOD_DIR'] = this.#lastGood;
    process.on('exit', () => rmSync(this.#lastGood, { recursive: true, force: true }));
  }

  start(): void {
    for (let i = 1; i <= this.#count; i++) this.#fork(i);
    cluster.on('exit', (worker, code, signal) => this.#exited(worker, code, signal));
    cluster.on('listening', (worker) => {
      const bound = (this.#listening.get(worker.id) ?? 0) + 1;
      this.#listening.set(worker.id, bound);
      if (bound === HOST_NAMES.length) {
        this.#servingSince.set(worker.id, Date.now());
        this.#served = true;
        this.#retryMs.delete((worker as Worker & { portcullisIndex?: number }).portcullisIndex ?? 0);
      }
    });
    cluster.on('message', (worker, message: unknown) => {
      if (isLinkMessage(message)) this.#answer(worker, message);
    });
    // SIGINT and SIGTERM reach `stop` through main.ts's services list.
    process.on('SIGHUP', () => this.#broadcast('SIGHUP'));
    this.#log.info('gateway.workers', { count: this.#count });
  }

  #fork(index: number): void {
    // The first worker prints the start-up banner (main.ts, on stdout); the others would print the same
    // listeners again with a different demo token, so their stdout is dropped. Every worker logs on stderr.
    // Each worker is a whole gateway: it gets the young generation's size a gateway starts with (src/heap.ts).
    cluster.setupPrimary({ execArgv: workerExecArgv(), stdio: ['ignore', index === 1 ? 'inherit' : 'ignore', 'inherit', 'ipc'] });
    // The demo principal's PAT is issued once per start, by the first worker, whose banner shows it.
    const demo = index === 1 && !this.#demoIssued ? {} : { PORTCULLIS_DEMO_BOOTSTRAP: '0' };
    if (index === 1) this.#demoIssued = true;
    const worker = cluster.fork({ ...this.#workerEnv, ...demo, PORTCULLIS_WORKER_INDEX: String(index) });
    this.#listening.set(worker.id, 0);
    (worker as Worker & { portcullisIndex?: number }).portcullisIndex = index;
  }

  /** A worker asks on behalf of all: a reload of every worker, or the metrics of every worker. */
  #answer(from: Worker, message: LinkMessage): void {
    const reply = (m: LinkMessage) => from.isConnected() && from.send(m);
    if (message.portcullis === 'ready') {
      this.#answering.add(from.id);
      this.#log.info('gateway.worker_ready', { worker: (from as Worker & { portcullisIndex?: number }).portcullisIndex ?? 0 });
    } else if (message.portcullis === 'reload-all') {
      void this.#reloadAll(message.reason).then((workers) => reply({ portcullis: 'reload-all-done', id: message.id, workers }));
    } else if (message.portcullis === 'metrics') {
      void this.#metrics().then(
        (text) => reply({ portcullis: 'metrics-done', id: message.id, text }),
        (err: Error) => reply({ portcullis: 'metrics-done', id: message.id, error: err.message }),
      );
    }
  }

  /** Asks every connected worker to reload and collects each one's result, ordered by worker index. */
  #reloadAll(reason: string): Promise<WorkerReload[]> {
    const id = randomBytes(8).toString('hex');
    const asked = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && w.isConnected() && this.#answering.has(w.id));
    const results: WorkerReload[] = [];
    return new Promise((resolve) => {
      const finish = () => {
        cluster.off('message', collect);
        clearTimeout(timer);
        this.#log.info('config.reload.workers', { reason, results: results.map((r) => ({ worker: r.worker, ok: r.ok })) });
        resolve(results.sort((a, b) => a.worker - b.worker));
      };
      const collect = (_worker: Worker, m: unknown) => {
        if (!isLinkMessage(m) || m.portcullis !== 'reloaded' || m.id !== id) return;
        results.push(m.result);
        if (results.length === asked.length) finish();
      };
      // A worker that dies meanwhile never answers: answer with the others rather than hang the operator.
      const timer = setTimeout(finish, RELOAD_ANSWER_MS);
      cluster.on('message', collect);
      for (const w of asked) w.send({ portcullis: 'reload', id, reason } satisfies LinkMessage);
      if (asked.length === 0) finish();
    });
  }

  #aggregator: Promise<{ clusterMetrics(): Promise<string> }> | undefined;

  /** Every worker's metrics added up. prom-client is loaded on the first scrape only, to keep this process small. */
  async #metrics(): Promise<string> {
    this.#aggregator ??= import('prom-client').then(({ AggregatorRegistry }) => new AggregatorRegistry());
    return (await this.#aggregator).clusterMetrics();
  }

  #broadcast(signal: NodeJS.Signals): void {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  }

  #exited(worker: Worker, code: number | null, signal: string | null): void {
    const index = (worker as Worker & { portcullisIndex?: number }).portcullisIndex ?? 0;
    const serving = (this.#listening.get(worker.id) ?? 0) >= HOST_NAMES.length;
    const servedMs = Date.now() - (this.#servingSince.get(worker.id) ?? Date.now());
    this.#listening.delete(worker.id);
    this.#servingSince.delete(worker.id);
    this.#answering.delete(worker.id);
    if (this.#stopping) {
      if (code !== 0 && code !== null) this.#exitCode = 1;
      if (noneAlive()) this.#finish(this.#exitCode);
      return;
    }
    if (!serving && this.#served) {
      // A replacement that could not start (Redis down a moment, a refused edit with no last good copy yet):
      // the workers still serving keep serving, and it is tried again, later each time.
      const retryInMs = this.#retryMs.get(index) ?? RESPAWN_DELAY_MS;
      this.#retryMs.set(index, Math.min(retryInMs * 2, RETRY_MAX_MS));
      this.#log.error('gateway.worker_failed_to_start', { worker: index, code, signal, retryInMs, note: 'the other workers keep serving' });
      setTimeout(() => this.#stopping || this.#fork(index), retryInMs);
      return;
    }
    if (!serving) {
      // At start-up no worker could start (a bad configuration, a port taken, Redis unreachable): the others
      // would fail the same way, so stop them all and exit with its code.
      this.#log.error('gateway.worker_failed_to_start', { worker: index, code, signal });
      this.#exitCode = code === EX_CONFIG ? EX_CONFIG : 1;
      this.#stop('worker-start-failure');
      return;
    }
    this.#log.error('gateway.worker_died', { worker: index, code, signal });
    // One that dies soon after it started serving is likely to again: a pause, so that a crash loop does
    // not spin the CPU and the log.
    if (servedMs >= STEADY_MS) this.#fork(index);
    else setTimeout(() => this.#stopping || this.#fork(index), RESPAWN_DELAY_MS);
  }

  stop(reason = 'stop'): Promise<number> {
    this.#stop(reason);
    return this.done;
  }

  #stop(reason: string): void {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#log.info('gateway.stopping', { signal: reason, workers: Object.keys(cluster.workers ?? {}).length });
    if (noneAlive()) {
      this.#finish(this.#exitCode);
      return;
    }
    // Each worker closes its listeners, lets its calls finish and closes the store (main.ts), then exits.
    this.#broadcast('SIGTERM');
    const kill = setTimeout(() => {
      this.#log.error('gateway.workers_killed', { afterMs: STOP_GRACE_MS });
      this.#broadcast('SIGKILL');
      this.#finish(1);
    }, STOP_GRACE_MS);
    kill.unref();
    void this.done.then(() => clearTimeout(kill));
  }
}
