/**
 * Jobs: every call is one. A job's id is deterministic — a UUID derived from the principal and a canonical
 * form of what decides the answer (model, task, scopeId, max_tokens, messages, tools, tool_choice, and the
 * `seed` when one is sent) — so the identical request from the same principal finds the same job: it
 * re-attaches instead of paying for a second upstream call. Streaming or not does not change the answer, so
 * `stream` is not part of it. `seed` is not forwarded, but it is how a client asks for a fresh answer on
 * purpose (docs/clients.md): another seed, another job.
 *
 * The record holds what another instance needs to see the job, wait for it, or fail it cleanly when its
 * runner died: status, owner and lease, the reservation to release, the result or the error.
 */
import { createHash, hash as oneShotHash } from 'node:crypto';
import { canonicalJson as rfc8785 } from '../canonical-json.js';
import { contentJson, isLongContent } from '../compat/content-json.js';
import type { Reservation } from '../metering/money.js';

export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'expired';

export const TERMINAL: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'expired']);

export interface JobResult {
  /** The chat.completion body as answered (billing, receiptId, usage, chargedMicroUSD included). */
  completion: Record<string, unknown>;
  content: string | null;
  toolCalls: unknown[] | null;
  finishReason: string;
}

export interface JobRecord {
  jobId: string;
  principalId: string;
  /** The catalog id requested. */
  model: string;
  task: string;
  scopeId: string | null;
  /** The route that made the job (chat completions or the jobs API); either runs to its end. */
  origin: 'chat' | 'api';
  status: JobStatus;
  billing: 'free' | 'paid';
  receiptId: string;
  /** The attempt's call id; a failed job resubmitted gets a new attempt. */
  callId: string;
  /** Instance running the job and until when its lease holds; past it, a sweeper fails the job. */
  owner: string;
  leaseUntil: number;
  reservation: Reservation;
  createdAt: string;
  updatedAt: string;
  result?: JobResult;
  error?: { code: string; message: string };
}

/** What decides a job's answer. */
export interface JobKey {
  model: string;
  task: string;
  scopeId: string | null;
  max_tokens: number;
  messages: Array<{ role: string; content?: string | null; name?: string; tool_call_id?: string; tool_calls?: unknown[]; refusal?: string | null }>;
  tools?: unknown[] | undefined;
  tool_choice?: unknown;
  /** Part of the identity only when sent, so requests without one keep the ids they always had. */
  seed?: number | null;
}

/**
 * The digest is fed piece by piece, each piece a JSON array in a fixed order, so equal requests hash equal
 * whatever order their client wrote keys in. Only the free-form JSON (tools, tool_choice, tool calls) goes
 * through RFC 8785 canonicalisation; messages, the bulk of a large request, are plain JSON.stringify —
 * canonicalising them whole was 8% of the gateway's CPU on a 100 KB request.
 */
export function jobIdFor(principalId: string, key: JobKey): string {
  const head = JSON.stringify([principalId, key.model, key.task, key.scopeId, key.max_tokens]);
  // A request without a long content (every small call) is hashed as one text in one call: the same bytes
  // as the pieces below, without a Hash object and an update per message.
  const h = key.messages.some((m) => isLongContent(m.content)) ? piecewiseDigest(head, key) : oneShotHash('sha256', head + keyTail(key), 'buffer');
  // An RFC 9562 version-8 (custom) UUID from the first 16 bytes of the digest.
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const canonical = (v: unknown) => (v === undefined ? 'null' : canonicalJson(v));

/** What follows the head of a request without long contents, as the text `piecewiseDigest` hashes in pieces. */
function keyTail(key: JobKey): string {
  let text = '';
  for (const m of key.messages) {
    text += `\n${JSON.stringify([m.role, m.content ?? null, m.name ?? null, m.tool_call_id ?? null])}${canonical(m.tool_calls)}`;
    if (typeof m.refusal === 'string') text += `\nrefusal ${JSON.stringify(m.refusal)}`;
  }
  text += `\n${canonical(key.tools)}\n${canonical(key.tool_choice)}`;
  if (key.seed !== undefined && key.seed !== null) text += `\nseed ${key.seed}`;
  return text;
}

/** The digest fed piece by piece, a long content's JSON without a copy of it. */
function piecewiseDigest(head: string, key: JobKey): Buffer {
  const hash = createHash('sha256').update(head);
  for (const m of key.messages) {
    if (isLongContent(m.content)) {
      // The bytes of the line below, fed in three pieces: the content's JSON is the one the upstream body
      // reuses (src/compat/content-json.ts), and is hashed without a copy of it.
      hash.update(`\n[${JSON.stringify(m.role)},`);
      hash.update(contentJson(m, m.content));
      hash.update(`,${JSON.stringify(m.name ?? null)},${JSON.stringify(m.tool_call_id ?? null)}]${canonical(m.tool_calls)}`);
    } else {
      hash.update(`\n${JSON.stringify([m.role, m.content ?? null, m.name ?? null, m.tool_call_id ?? null])}${canonical(m.tool_calls)}`);
    }
    // The refusal is forwarded, so it decides the answer; hashed only when sent, so other ids stay as they were.
    if (typeof m.refusal === 'string') hash.update(`\nrefusal ${JSON.stringify(m.refusal)}`);
  }
  hash.update(`\n${canonical(key.tools)}\n${canonical(key.tool_choice)}`);
  if (key.seed !== undefined && key.seed !== null) hash.update(`\nseed ${key.seed}`);
  return hash.digest();
}

/** sha256 of a body's canonical JSON: what an idempotency key is bound to. */
export function bodyHash(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/**
 * RFC 8785 form where it exists. JSON can carry a lone UTF-16 surrogate (`"\ud800"`) and RFC 8785 cannot, so
 * canonicalisation refuses one, which made such a request a 500. Such a value is hashed as its plain JSON
 * behind a `!`, which no canonical text starts with: it still identifies the request (one key order; a
 * client resending it sends the same bytes) and can never collide with a canonical one.
 */
function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  try {
    return rfc8785(value);
  } catch {
    return `!${JSON.stringify(value) ?? 'null'}`;
  }
}

/**
 * The job object of the spec: jobId, status, billing, model, receiptId, pollAfterMs; content when done.
 * `pollAfterMs` is always there, a terminal job included (the spec lists it among the fields every answer
 * carries): a poller reads the same shape throughout, and the status — not the field's absence — says stop.
 */
export function jobObject(job: JobRecord, pollAfterMs: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    jobId: job.jobId,
    status: job.status,
    billing: job.billing,
    model: job.model,
    receiptId: job.receiptId,
    pollAfterMs,
  };
  if (job.result) {
    out['content'] = job.result.content;
    out['toolCalls'] = job.result.toolCalls;
    out['finishReason'] = job.result.finishReason;
  }
  if (job.error) out['error'] = job.error;
  return out;
}
