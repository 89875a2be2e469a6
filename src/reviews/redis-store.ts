/**
 * The review list in Redis, beside the store's keys and on its connection (its deadlines, its fail-closed
 * behaviour). Layout under the prefix (familyPrefix('rv') on a cluster, store/redis.ts):
 *   rv:<callId>   string  the entry JSON, written once (SET NX)
 *   rvd:<day>     zset    call ids of the day's entries, scored by time (ms)
 * Recording is one script (entry and index together); listing is one read-only script (count, page, and the
 * entries).
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { MAX_REVIEW_PAGE, reviewScore, type ReviewEntry, type ReviewPage, type ReviewStore } from './store.js';

const RECORD = loadLua(import.meta.url, 'lua/record.lua');
const LIST = loadLua(import.meta.url, 'lua/list.lua');

export class RedisReviewStore implements ReviewStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.familyPrefix('rv');
  }

  async record(entry: ReviewEntry): Promise<void> {
    await this.#store.runScript(
      'reviews.record',
      RECORD,
      [`${this.#prefix}rv:${entry.callId}`, `${this.#prefix}rvd:${entry.day}`],
      [JSON.stringify(entry), entry.callId, String(reviewScore(entry))],
    );
  }

  async list(day: string, offset = 0, limit = MAX_REVIEW_PAGE): Promise<ReviewPage> {
    const n = Math.min(Math.max(limit, 0), MAX_REVIEW_PAGE);
    if (n === 0) {
      const [total] = (await this.#store.runScript('reviews.list', LIST, [`${this.#prefix}rvd:${day}`, this.#prefix], ['1', '0'])) as [number];
      return { day, total, offset, data: [] };
    }
    const reply = (await this.#store.runScript(
      'reviews.list',
      LIST,
      [`${this.#prefix}rvd:${day}`, this.#prefix],
      [String(offset), String(offset + n - 1)],
    )) as [number, string[]];
    return { day, total: reply[0], offset, data: reply[1].map((e) => JSON.parse(e) as ReviewEntry) };
  }
}
