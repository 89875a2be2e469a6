/**
 * Decision records and version contents in Redis, beside the store's keys and on its connection.
 * Layout under familyPrefix('dec') (one slot on a cluster):
 *   dec:r:<decision id>  string  the record's JSON, expiring after the retention (PX)
 *   dec:t                zset    decision id -> timestamp (epoch ms); entries past the retention are trimmed
 *                                on each write, and one whose record expired is skipped when listing
 *   dec:v                hash    "<document> <sha256>" -> the version's JSON, written once (HSETNX)
 *   dec:rep              hash    candidate fingerprint -> ISO time an impact report was produced for it
 */
import { loadLua, loadReadOnlyLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import type { DecisionRecord } from './record.js';
import type { DecisionStore, StoredVersion } from './store.js';

const PUT = loadLua(import.meta.url, 'lua/put.lua');
const LIST = loadReadOnlyLua(import.meta.url, 'lua/list.lua');

export class RedisDecisionStore implements DecisionStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = `${store.familyPrefix('dec')}dec:`;
  }

  async put(record: DecisionRecord, retentionMs: number, now: number): Promise<void> {
    const args = [record.decision_id, JSON.stringify(record), String(Date.parse(record.timestamp)), String(Math.max(1, Math.floor(retentionMs))), String(now)];
    await this.#store.runScript('decisions.put', PUT, [`${this.#prefix}t`, `${this.#prefix}r:${record.decision_id}`], args);
  }

  async get(id: string): Promise<DecisionRecord | null> {
    const reply = await this.#store.command('decisions.get', (c) => c.get(`${this.#prefix}r:${id}`));
    return typeof reply === 'string' ? (JSON.parse(reply) as DecisionRecord) : null;
  }

  async list(fromMs: number, toMs: number, limit: number): Promise<DecisionRecord[]> {
    const reply = (await this.#store.runScript(
      'decisions.list',
      LIST,
      [`${this.#prefix}t`, `${this.#prefix}r:`],
      [String(fromMs), String(toMs), String(limit)],
    )) as string[];
    return reply.map((j) => JSON.parse(j) as DecisionRecord);
  }

  async putVersion(v: StoredVersion): Promise<void> {
    await this.#store.command('decisions.putVersion', (c) => c.hSetNX(`${this.#prefix}v`, `${v.document} ${v.sha256}`, JSON.stringify(v)));
  }

  async getVersion(document: string, sha256: string): Promise<StoredVersion | null> {
    const reply = await this.#store.command('decisions.getVersion', (c) => c.hGet(`${this.#prefix}v`, `${document} ${sha256}`));
    return typeof reply === 'string' ? (JSON.parse(reply) as StoredVersion) : null;
  }

  async noteReport(fingerprint: string, at: string): Promise<void> {
    await this.#store.command('decisions.noteReport', (c) => c.hSet(`${this.#prefix}rep`, fingerprint, at));
  }

  async reported(fingerprint: string): Promise<string | null> {
    const reply = await this.#store.command('decisions.reported', (c) => c.hGet(`${this.#prefix}rep`, fingerprint));
    return typeof reply === 'string' ? reply : null;
  }
}
