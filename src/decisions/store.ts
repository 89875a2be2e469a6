/**
 * Where decision records and the content of every version live, beside the main store: in Redis on the
 * store's connection (redis-store.ts), or in this process with the memory store (memory-store.ts). One
 * contract suite (test/decisions/store-contract.test.ts) runs against both.
 *
 * Decision records are kept for the retention the configuration names (`policy.decisionRetentionDays`),
 * then expire on their own. Versions are kept for good: a receipt may name one years later.
 */
import type { DecisionRecord } from './record.js';
import type { Logger } from '../log.js';

/** One document version's content, as GET /v1/secure/history/<document>/<sha256> serves it. */
export interface StoredVersion {
  /** `policy`, `policy-data`, `catalog`, `rules`, `guardrails`, `firewall`, `compliance`. */
  document: string;
  version: string;
  /** Hex SHA-256 of the content's bytes (the wasm for the policy, the file as read for a YAML document). */
  sha256: string;
  /** Path of the file under the configuration root, when it is one. */
  file?: string;
  encoding: 'utf8' | 'base64';
  content: string;
  /** The policy only: the Rego it was built from, by repository-relative path. */
  sources?: Record<string, string>;
  /** The policy only: the hash of `sources` (versions.ts sourcesHash), the manifest's `sourceHash`. */
  sourceHash?: string;
}

export interface DecisionStore {
  /** Stores a record (by `decision_id`, once: a repeat changes nothing) until `now + retentionMs`. */
  put(record: DecisionRecord, retentionMs: number, now: number): Promise<void>;
  get(id: string): Promise<DecisionRecord | null>;
  /** Records timestamped in [fromMs, toMs), oldest first, at most `limit`; expired ones are gone. */
  list(fromMs: number, toMs: number, limit: number, now: number): Promise<DecisionRecord[]>;
  /**
   * The record's write to ride in the call's reservation (DecisionRide), when this store can have it
   * written there; null (or absent) when it is written on its own with `put`.
   */
  ride?(record: DecisionRecord, retentionMs: number, now: number, log: Logger): DecisionRide | null;
  /** Stores a version's content under `<document> <sha256>`, once. */
  putVersion(v: StoredVersion): Promise<void>;
  getVersion(document: string, sha256: string): Promise<StoredVersion | null>;
  /** Notes that an impact report was produced for a candidate (by its fingerprint). */
  noteReport(fingerprint: string, at: string): Promise<void>;
  /** When an impact report was produced for the candidate, or null. */
  reported(fingerprint: string): Promise<string | null>;
}

/**
 * An admitted call's decision record, to be written in its reservation's own script (one command fewer per
 * call) when the record's keys share the money's slot — on one primary, not on a cluster, where the
 * decision family has a slot of its own. Built by the Redis store (`ride`); the ledger's reserve writes it
 * first, whatever the reservation's outcome, and tells `failed` when it could not. A ledger that cannot
 * carry it calls `alone`, which writes it as its own command, as a record that does not ride is written.
 * Neither ever throws into the call.
 */
export interface DecisionRide {
  /** The time index and the record's key. */
  readonly keys: readonly [string, string];
  /** The decision id, the record's JSON, its time (epoch ms), the retention (ms), now (epoch ms). */
  readonly args: readonly [string, string, string, string, string];
  /** The record was not stored (the script's part failed, or the script never ran): logged, never thrown. */
  failed(reason: string): void;
  /** Writes the record on its own (fire and forget), for a ledger that cannot carry it. */
  alone(): void;
}

/** How many records one listing answers at most. */
export const MAX_LIST = 10_000;

/**
 * Every record of [from, to), a page at a time, oldest first: each page starts at the last one's time, and
 * a record seen on the page before is skipped. A page is handed on before the next is asked for, so a long
 * period is never held whole. (Should more than a page of records share one millisecond, the rest of that
 * millisecond is skipped rather than looped over.)
 */
export async function* pagesOf(
  list: (from: number, to: number, limit: number) => Promise<DecisionRecord[]>,
  from: number,
  to: number,
  limit = MAX_LIST,
): AsyncGenerator<DecisionRecord[]> {
  let cursor = from;
  let seen = new Set<string>();
  for (;;) {
    const page = await list(cursor, to, limit);
    const fresh = page.filter((r) => !seen.has(r.decision_id));
    if (fresh.length > 0) yield fresh;
    if (page.length < limit) return;
    const last = Date.parse(page.at(-1)!.timestamp);
    if (last === cursor) return;
    seen = new Set(page.filter((r) => Date.parse(r.timestamp) === last).map((r) => r.decision_id));
    cursor = last;
  }
}
