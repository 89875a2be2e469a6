/**
 * The messages between the supervisor (src/workers.ts) and its workers (src/worker-link.ts) on the cluster
 * IPC channel. Kept apart, with no imports of the gateway, so the supervisor stays small.
 */
import type { ReloadResult } from './config/reloader.js';

/** One worker's answer to a reload: which worker, and its result (its versions, or why it refused). */
export type WorkerReload = { worker: number; pid: number } & ReloadResult;

export type LinkMessage =
  | { portcullis: 'ready' }
  | { portcullis: 'reload-all'; id: string; reason: string }
  | { portcullis: 'reload'; id: string; reason: string }
  | { portcullis: 'reloaded'; id: string; result: WorkerReload }
  | { portcullis: 'reload-all-done'; id: string; workers: WorkerReload[] }
  | { portcullis: 'metrics'; id: string }
  | { portcullis: 'metrics-done'; id: string; text?: string; error?: string };

export function isLinkMessage(m: unknown): m is LinkMessage {
  return typeof m === 'object' && m !== null && typeof (m as { portcullis?: unknown }).portcullis === 'string';
}
