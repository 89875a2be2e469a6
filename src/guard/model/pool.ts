/**
 * The encoder pool: inference off the event loop. A fixed number of worker threads (worker-source.ts), each with
 * the engine loaded, take jobs from one queue. Both the queue and the time are bounded:
 *  - a job that would make the queue longer than `queue` is refused at once (ClassifierError `overloaded`);
 *  - a job not answered within `timeoutMs` of being submitted (waiting included) is rejected
 *    (ClassifierError `timeout`); if it was running, its worker is ended and a fresh one started, so a
 *    runaway text cannot keep a core busy after its caller has moved on.
 * Workers start on first use and never keep the process alive. A worker that dies (mid-job or idle) fails
 * its job at once (`error`) and, once it had loaded the engine, is replaced. What a rejection means for the
 * call is the caller's fail mode (intent-model.ts).
 */
import { Worker } from 'node:worker_threads';
import { ClassifierError } from '../types.js';
import type { EncoderFiles } from './encoder.js';
import { WORKER_SOURCE } from './worker-source.js';

export interface EncoderPoolOptions {
  workers: number;
  queue: number;
  timeoutMs: number;
}

interface Job {
  id: number;
  texts: string[];
  resolve(v: Float32Array[]): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  slot?: Slot;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job?: Job;
}

export class EncoderPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly files: EncoderFiles,
    private readonly options: EncoderPoolOptions,
  ) {
    if (!(options.workers >= 1) || !(options.queue >= 0) || !(options.timeoutMs > 0)) throw new Error('encoder pool: workers >= 1, queue >= 0, timeoutMs > 0');
  }

  /** Starts the workers (on first use: a runtime that never reads a request with the model costs nothing). */
  private start(): void {
    if (this.slots.length === 0) for (let i = 0; i < this.options.workers; i++) this.slots.push(this.spawn());
  }

  /** Jobs waiting for a worker (not counting running ones). */
  get queued(): number {
    return this.waiting.length;
  }

  private spawn(): Slot {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { addon: this.files.addon, weights: this.files.weights } });
    const slot: Slot = { worker, ready: false };
    worker.on('message', (m: { ready?: true; id?: number; vectors?: Float32Array[]; error?: string }) => {
      if (m.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== m.id) return;
      slot.job = undefined;
      clearTimeout(job.timer);
      if (m.error !== undefined) job.reject(new ClassifierError('error'));
      else job.resolve(m.vectors!);
      this.pump();
    });
    const lost = () => {
      const i = this.slots.indexOf(slot);
      if (i < 0) return;
      const job = slot.job;
      slot.job = undefined;
      if (job) {
        clearTimeout(job.timer);
        job.reject(new ClassifierError('error'));
      }
      if (this.closed) return;
      if (!slot.ready) {
        // It died before it could load the engine: starting another at once would only die again, in a
        // loop. Drop it; the next call starts the pool afresh, and waiting calls fail now.
        this.slots.splice(i, 1);
        if (this.slots.length === 0) {
          for (const w of this.waiting.splice(0)) {
            clearTimeout(w.timer);
            w.reject(new ClassifierError('error'));
          }
        }
        return;
      }
      this.slots[i] = this.spawn();
    };
    worker.on('error', lost);
    worker.on('exit', lost);
    // After the listeners: adding a 'message' listener refs the worker's port again, so unref'd first the
    // thread kept the process up after its last call (a stopped gateway, a script, a test run never ended).
    worker.unref();
    return slot;
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.waiting.length === 0) return;
      if (!slot.ready || slot.job) continue;
      const job = this.waiting.shift()!;
      slot.job = job;
      job.slot = slot;
      slot.worker.postMessage({ id: job.id, texts: job.texts });
    }
  }

  /** The embeddings of `texts` (one job: one worker embeds them in turn). */
  embed(texts: string[]): Promise<Float32Array[]> {
    if (this.closed) return Promise.reject(new ClassifierError('closed'));
    if (texts.length === 0) return Promise.resolve([]);
    this.start();
    // Room: a worker without a job (started or starting) for each waiting job, plus `queue` more.
    const free = this.slots.filter((s) => !s.job).length;
    if (this.waiting.length >= free + this.options.queue) return Promise.reject(new ClassifierError('overloaded'));
    return new Promise<Float32Array[]>((resolve, reject) => {
      const job: Job = {
        id: this.nextId++,
        texts,
        resolve,
        reject,
        timer: setTimeout(() => this.expire(job), this.options.timeoutMs),
      };
      job.timer.unref();
      this.waiting.push(job);
      this.pump();
    });
  }

  private expire(job: Job): void {
    const i = this.waiting.indexOf(job);
    if (i >= 0) this.waiting.splice(i, 1);
    const slot = job.slot;
    if (slot && slot.job === job) {
      // The engine cannot be interrupted mid-text: end the thread and put a fresh one in its place.
      slot.job = undefined;
      const at = this.slots.indexOf(slot);
      if (at >= 0 && !this.closed) this.slots[at] = this.spawn();
      slot.worker.removeAllListeners('exit');
      void slot.worker.terminate();
    }
    job.reject(new ClassifierError('timeout'));
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) {
      clearTimeout(job.timer);
      job.reject(new ClassifierError('closed'));
    }
    await Promise.all(
      this.slots.map((s) => {
        if (s.job) {
          clearTimeout(s.job.timer);
          s.job.reject(new ClassifierError('closed'));
          s.job = undefined;
        }
        s.worker.removeAllListeners('exit');
        return s.worker.terminate();
      }),
    );
  }
}
