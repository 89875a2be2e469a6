/**
 * The review list in one process, beside the memory store: the Redis review store's semantics (contract
 * suite in test/reviews/contract.test.ts), entries copied in and out.
 */
import { MAX_REVIEW_PAGE, reviewScore, type ReviewEntry, type ReviewPage, type ReviewStore } from './store.js';

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export class MemoryReviewStore implements ReviewStore {
  readonly #entries = new Map<string, ReviewEntry>();
  /** Call ids per day, kept in time order (ties by call id, as the Redis sorted set orders them). */
  readonly #days = new Map<string, ReviewEntry[]>();

  async record(entry: ReviewEntry): Promise<void> {
    if (this.#entries.has(entry.callId)) return;
    const stored = copy(entry);
    this.#entries.set(stored.callId, stored);
    const list = this.#days.get(stored.day) ?? [];
    list.push(stored);
    list.sort((a, b) => reviewScore(a) - reviewScore(b) || (a.callId < b.callId ? -1 : a.callId > b.callId ? 1 : 0));
    this.#days.set(stored.day, list);
  }

  async list(day: string, offset = 0, limit = MAX_REVIEW_PAGE): Promise<ReviewPage> {
    const all = this.#days.get(day) ?? [];
    const n = Math.min(Math.max(limit, 0), MAX_REVIEW_PAGE);
    return { day, total: all.length, offset, data: copy(all.slice(offset, offset + n)) };
  }
}
