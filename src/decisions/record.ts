/**
 * A decision record: one admission decision as OPA's decision log writes it (`decision_id`, `path`,
 * `input`, `result`, `bundles.<name>.revision`, `labels`, `timestamp`, `erased`, `masked`), plus what a
 * reviewer needs to replay it without the gateway: the versions the call's receipt names, the SHA-256 of
 * every document the decision was taken under (the wasm, the policy's `data` document, the catalog and the
 * rules, each fetchable from the version history), and the sizes of the request.
 *
 * The input is exactly what the policy saw. Prompt content never reaches it: the request's messages are
 * erased (`erased: ["/input/messages"]`, in OPA's words), and only the guard's findings (rule ids, in the
 * input) and the request's sizes are kept. A receipt carries `decision.record: {id, sha256}`, the SHA-256
 * of the RFC 8785 form of the record, so the receipt's leaf in the log commits to the record.
 */
import { createHash, hash as oneShotHash } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import type { Decision, PolicyInput } from '../policy/engine.js';

export const DECISION_PATH = 'admission/decision';
/** What of the admission input is never kept: the request's messages (the prompt). */
export const ERASED = ['/input/messages'] as const;

export type RecordKind = 'live' | 'shadow';

export interface DecisionRecord {
  decision_id: string;
  path: string;
  input: PolicyInput;
  result: Decision;
  /** The policy bundle by its revision: the hex SHA-256 of the wasm. */
  bundles: { admission: { revision: string } };
  /** `kind` (live or shadow) and the gateway's name; strings only, as OPA's labels are. */
  labels: Record<string, string>;
  timestamp: string;
  erased: string[];
  masked: string[];
  /** The call this decision admitted or refused. */
  call_id: string;
  /** The versions the call's receipt names (`decision.versions`). */
  versions: Record<string, string>;
  /** Document name -> hex SHA-256 of what the decision was taken under (GET /v1/secure/history/<doc>/<sha>). */
  documents: Record<string, string>;
  /** The request's sizes: what is kept instead of its content. */
  sizes: { messages: number; inputChars: number; inputTokens: number };
  /** A shadow record: the live decision it was taken beside. */
  shadow_of?: string;
}

/** Each record's canonical text, made once: a record is never changed after it is built (a shadow's is a copy). */
const texts = new WeakMap<DecisionRecord, string>();

/**
 * The record's RFC 8785 (JCS) form: the bytes its hash is taken over, and the bytes the store writes (so a
 * record is serialised once per call, and what the decision routes answer is what the receipt's hash
 * commits to). Throws a TypeError on what RFC 8785 cannot express.
 */
export function recordText(record: DecisionRecord): string {
  let text = texts.get(record);
  if (text === undefined) {
    text = canonicalJson(record);
    texts.set(record, text);
  }
  return text;
}

/** Hex SHA-256 of the record's canonical form: what the receipt carries as `decision.record.sha256`. */
export function recordSha256(record: DecisionRecord): string {
  return oneShotHash('sha256', recordText(record), 'hex');
}

/** A principal as reports name it: the first 16 hex digits of the SHA-256 of its id. */
export function principalHash(id: string | null | undefined): string {
  return id ? createHash('sha256').update(id).digest('hex').slice(0, 16) : 'anonymous';
}

/** The decision id of a call's live decision; its shadow's adds `.shadow`. */
export const decisionId = (callId: string, kind: RecordKind = 'live'): string => (kind === 'live' ? `dec_${callId}` : `dec_${callId}.shadow`);
