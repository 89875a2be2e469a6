/**
 * The graph host's worker threads (node:worker_threads): graph queries are synchronous walks over an
 * in-memory graph, and on the event loop every listener shares, a few hundred of them stalled every host
 * (the catalog took seconds to answer). Here each call runs on one of `graph.workers` threads (each holds
 * its own copy of the knowledge), waits in a queue of at most `graph.queue` calls when they are all busy
 * (past it: 503 `tool-busy`), and gets `graph.callMs` of a thread's time once it runs: a call still
 * running then has its thread ended (the only way to stop a synchronous walk) and is answered 422
 * `tool-call-too-long`; a new thread takes the old one's place on the next call.
 *
 * One pool per graph host; its threads do not keep the process alive, and a thread idle for IDLE_MS ends,
 * giving its memory back (so a stopped gateway's threads go too).
 */
import { Worker } from 'node:worker_threads';
import { GatewayError, type ErrorCode } from '../errors.js';
import type { RunGraphTool } from './graph-server.js';

export interface GraphPoolSettings {
  workers: number;
  queue: number;
  callMs: number;
}

const IDLE_MS = 60_000;

/**
 * Built, the worker is graph-worker.js. Under tsx (tests, `npm run bench`) the sources are .ts, which a
 * thread's entry cannot be (tsx's hooks do not reach it): a one-line entry registers tsx in the thread first.
 */
function startWorker(): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./graph-worker.js', import.meta.url));
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('./graph-worker.ts', import.meta.url).href);
  return new Worker(`import(${tsx}).then((m) => { m.register(); return import(${entry}); })`, { eval: true });
}

interface Task {
  id: number;
  name: string;
  args: unknown;
  resolve(answer: object): void;
  reject(err: Error): void;
}

type Reply =
  | { ready: true }
  | { id: number; answer: object }
  | { id: number; refused: { code: ErrorCode; message: string; param: string | null } }
  | { id: number; failed: string };

class Thread {
  readonly worker: Worker;
  ready = false;
  task: Task | null = null;
  timer: NodeJS.Timeout | null = null;
  idle: NodeJS.Timeout | null = null;

  constructor(onReply: (t: Thread, r: Reply) => void, onExit: (t: Thread) => void) {
    this.worker = startWorker();
    this.worker.on('message', (r: Reply) => onReply(this, r));
    this.worker.on('error', () => onExit(this));
    this.worker.on('exit', () => onExit(this));
    // After the listeners: adding a 'message' listener refs the worker's port again, and a thread then kept
    // the process up (a stopped gateway's, a test run's) until its idle end.
    this.worker.unref();
  }
}

export class GraphPool {
  readonly #settings: () => GraphPoolSettings;
  readonly #threads = new Set<Thread>();
  readonly #queue: Task[] = [];
  #ids = 0;

  constructor(settings: () => GraphPoolSettings) {
    this.#settings = settings;
  }

  readonly run: RunGraphTool = (name, args) =>
    new Promise<object>((resolve, reject) => {
      const { queue } = this.#settings();
      if (this.#queue.length >= queue) {
        reject(new GatewayError('tool-busy'));
        return;
      }
      this.#queue.push({ id: ++this.#ids, name, args, resolve, reject });
      this.#pump();
    });

  /** Whether a call now would find the queue full: the host sheds such a request before parsing it. */
  get full(): boolean {
    return this.#queue.length >= this.#settings().queue;
  }

  /** Threads alive now (tests and metrics). */
  get size(): number {
    return this.#threads.size;
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      const free = [...this.#threads].find((t) => t.ready && t.task === null);
      if (free) {
        this.#give(free, this.#queue.shift()!);
        continue;
      }
      // Start a thread when there is room for one and none is still loading (it takes the next task).
      const loading = [...this.#threads].some((t) => !t.ready);
      if (!loading && this.#threads.size < Math.max(1, this.#settings().workers)) {
        this.#threads.add(
          new Thread(
            (t, r) => this.#reply(t, r),
            (t) => this.#exit(t),
          ),
        );
      }
      return;
    }
  }

  #give(t: Thread, task: Task): void {
    if (t.idle) clearTimeout(t.idle);
    t.idle = null;
    t.task = task;
    t.timer = setTimeout(() => {
      // Past its budget: the walk cannot be interrupted, so its thread ends (exit answers the task).
      void t.worker.terminate();
    }, this.#settings().callMs);
    t.timer.unref();
    t.worker.postMessage({ id: task.id, name: task.name, args: task.args });
  }

  #reply(t: Thread, r: Reply): void {
    if ('ready' in r) {
      t.ready = true;
      this.#pump();
      if (t.task === null) {
        t.idle = setTimeout(() => void t.worker.terminate(), IDLE_MS);
        t.idle.unref();
      }
      return;
    }
    const task = t.task;
    if (!task || task.id !== r.id) return;
    if (t.timer) clearTimeout(t.timer);
    t.task = null;
    t.timer = null;
    if ('answer' in r) task.resolve(r.answer);
    else if ('refused' in r) task.reject(new GatewayError(r.refused.code, r.refused.message, r.refused.param ? { param: r.refused.param } : {}));
    else task.reject(new Error(`graph query failed: ${r.failed}`));
    t.idle = setTimeout(() => void t.worker.terminate(), IDLE_MS);
    t.idle.unref();
    this.#pump();
  }

  #exit(t: Thread): void {
    if (!this.#threads.delete(t)) return;
    if (t.timer) clearTimeout(t.timer);
    if (t.idle) clearTimeout(t.idle);
    if (t.task)
      t.task.reject(
        new GatewayError(
          'tool-call-too-long',
          `the call ran longer than ${this.#settings().callMs} ms of a worker's time and was stopped; ask for less (a smaller depth or limit)`,
        ),
      );
    t.task = null;
    this.#pump();
  }

  /** Ends every thread (the process's last gateway stopping, tests). */
  async close(): Promise<void> {
    for (const task of this.#queue.splice(0)) task.reject(new GatewayError('tool-busy'));
    await Promise.all([...this.#threads].map((t) => t.worker.terminate()));
  }
}
