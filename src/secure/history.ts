/**
 * The version history GET /v1/secure serves: every version of every reviewer-facing document (guardrails,
 * firewall, compliance, rungs, the catalog, the admission policy) with its content hash and the time it
 * first went live on any gateway sharing the store. The gateway records it when a runtime goes live — at
 * start and after every reload that swapped one in — so a reviewer can see what changed and when.
 *
 * A document is identified by its content hash, not its version string: an edit that forgot to bump
 * `version:` still shows as a new entry (same version, another hash). When several gateways record the
 * same hash, the earliest time stands.
 *
 * A capability with its own store beside the main one: Redis on the store's connection
 * (redis-history.ts), or this process with the memory store (memory-history.ts); one contract suite
 * (test/secure/history-contract.test.ts) runs against both.
 */

export interface DocumentRef {
  /** `guardrails`, `firewall`, `compliance`, `rungs`, `catalog`, `policy`. */
  document: string;
  version: string;
  /** Hex SHA-256 of the file as read (the wasm, for the policy). */
  sha256: string;
}

export interface DocumentVersion extends DocumentRef {
  /** ISO-8601: when a runtime holding this content first went live. */
  liveSince: string;
}

export interface HistoryStore {
  /**
   * Records each document as live since `at`, unless it is known with an earlier time, and returns the
   * whole history (ordered as `sortHistory`). Atomic: racing gateways keep the earliest time.
   */
  record(refs: readonly DocumentRef[], at: string): Promise<DocumentVersion[]>;
  /** The whole history, ordered as `sortHistory`. */
  list(): Promise<DocumentVersion[]>;
}

/** By document name, then oldest first (ties by hash), so the served body is deterministic. */
export function sortHistory(entries: DocumentVersion[]): DocumentVersion[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return entries.sort((a, b) => cmp(a.document, b.document) || cmp(a.liveSince, b.liveSince) || cmp(a.sha256, b.sha256));
}

/** The field a document version is keyed by. */
export const historyField = (r: DocumentRef): string => `${r.document} ${r.sha256}`;
