/**
 * The call's job: its deterministic id (principal + canonical request, src/jobs/job.ts), and its record as
 * it is created — queued, not yet owned (the engine claims it).
 */
import { jobIdFor, type JobRecord } from '../jobs/job.js';
import type { Reservation } from '../metering/meter.js';
import type { Call } from './call.js';
import { newReceiptId } from './receipt.js';
import { isoNow } from '../iso-time.js';

export function callJobId(call: Call, principalId: string): string {
  const { request, maxTokens } = call.valid!;
  return jobIdFor(principalId, {
    model: request.model,
    task: call.task!,
    scopeId: call.scopeId,
    max_tokens: maxTokens,
    messages: request.messages,
    tools: request.tools,
    tool_choice: request.tool_choice,
    seed: request.seed ?? null,
  });
}

export function jobRecord(call: Call, origin: JobRecord['origin'], reservation: Reservation): JobRecord {
  const now = isoNow();
  return {
    jobId: call.jobId!,
    principalId: call.identity!.principal.id,
    model: call.model!.id,
    task: call.task!,
    scopeId: call.scopeId,
    origin,
    status: 'queued',
    billing: reservation.billing,
    receiptId: newReceiptId(call.id),
    callId: call.id,
    owner: '',
    leaseUntil: 0,
    reservation,
    createdAt: now,
    updatedAt: now,
  };
}

/** A job an identical request may attach to: one that has not failed or expired. */
export const isLive = (job: JobRecord | null): job is JobRecord => job !== null && job.status !== 'failed' && job.status !== 'expired';
