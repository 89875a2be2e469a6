/**
 * The operator review list: every admitted call a `flag` guardrail matched, kept for an operator to look
 * at (GET /admin/reviews?day=, `portcullis admin reviews`). An entry names the call, the principal, the
 * flagged rule ids, where in the request they matched, the receipt and the time — never prompt text.
 *
 * A capability with its own store beside the main one: in Redis on the store's connection
 * (redis-store.ts) or in this process with the memory store (memory-store.ts); one contract suite
 * (test/reviews/contract.test.ts) holds both to the same answers. Entries are kept like receipts: no
 * expiry.
 */

export interface ReviewEntry {
  callId: string;
  principalId: string;
  receiptId: string;
  /** The flag rule ids that matched, sorted. */
  rules: string[];
  /** Where each flagged finding matched (`messages[2].content`, `tools[0]`) and by which detector. */
  findings: Array<{ rule: string; detector: string; where: string }>;
  model: string;
  task: string;
  /** ISO-8601 time the call was admitted and recorded. */
  at: string;
  /** The UTC day (YYYY-MM-DD) the entry is listed under: the day the call counts on. */
  day: string;
}

export interface ReviewPage {
  day: string;
  /** Entries of the day in all. */
  total: number;
  offset: number;
  /** Oldest first. */
  data: ReviewEntry[];
}

export const MAX_REVIEW_PAGE = 1000;

export interface ReviewStore {
  /** Records an entry once per call id: a second record of the same call changes nothing. */
  record(entry: ReviewEntry): Promise<void>;
  /** One UTC day's entries, oldest first, `limit` (at most MAX_REVIEW_PAGE) from `offset`. */
  list(day: string, offset?: number, limit?: number): Promise<ReviewPage>;
}

export function reviewScore(entry: ReviewEntry): number {
  return Date.parse(entry.at) || 0;
}
