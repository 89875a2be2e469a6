/**
 * Decision records and version contents in Redis, beside the store's keys and on its connection.
 * Layout under familyPrefix('dec') (one slot on a cluster):
 *   dec:r:<decision id>  string  the record's canonical JSON (record.ts), expiring after the retention (PX)
 *   dec:t                zset    decision id -> timestamp (epoch ms); entries past the retention are trimmed
 *                                on each write, and one whose record expired is skipped when listing
 *   dec:v                hash    "<document> <sha256>" -> the version's JSON, written once (HSETNX)
 *   dec:rep              hash    candidate fingerprint -> ISO time an impact report was produced for it
 * On one primary, where these keys share the money's prefix, an admitted call's record rides in its
 * reservation's script (`ride`, lua/put.lib.lua loaded by the ledger's reserve): one command fewer per call.
 * On a cluster the family has its own slot, which no money script may touch, and the record is its own write.
 */
import { loadLua, loadReadOnlyLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { recordText, type DecisionRecord } from './record.js';
import type { DecisionRide, DecisionStore, StoredVersion } from './store.js';
import type { Logger } from '../log.js';

function putArgs(record: DecisionRecord, retentionMs: number, now: number): [string, string, string, string, string] {
  return [record.decision_id, recordText(record), String(Date.parse(record.timestamp)), String(Math.max(1, Math.floor(retentionMs))), String(now)];
}

/** A record riding in a reservation's script (store.ts DecisionRide). */
class RidingRecord implements DecisionRide {
  readonly #store: RedisDecisionStore;
  readonly #record: DecisionRecord;
  readonly #retentionMs: number;
  readonly #now: number;
  readonly #log: Logger;
  readonly keys: readonly [string, string];
  readonly args: readonly [string, string, string, string, string];

  constructor(
    store: RedisDecisionStore,
    record: DecisionRecord,
    keys: [string, string],
    args: [string, string, string, string, string],
    retentionMs: number,
    now: number,
    log: Logger,
  ) {
    this.#store = store;
    this.#record = record;
    this.keys = keys;
    this.args = args;
    this.#retentionMs = retentionMs;
    this.#now = now;
    this.#log = log;
  }

  failed(reason: string): void {
    this.#log.warn('decisions.store-failed', { decision: this.#record.decision_id, error: reason });
  }

  alone(): void {
    this.#store.put(this.#record, this.#retentionMs, this.#now).catch((err: unknown) => this.failed((err as Error).name));
  }
}

/** The record write (lua/put.lib.lua) that the ledger's reserve loads too, for a record riding in it. */
export const DECISION_LIB = '../decisions/lua/put.lib.lua';

const PUT = loadLua(import.meta.url, 'lua/put.lib.lua', 'lua/put.lua');
const LIST = loadReadOnlyLua(import.meta.url, 'lua/list.lua');

export class RedisDecisionStore implements DecisionStore {
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = `${store.familyPrefix('dec')}dec:`;
  }

  async put(record: DecisionRecord, retentionMs: number, now: number): Promise<void> {
    await this.#store.runScript('decisions.put', PUT, this.#keys(record), putArgs(record, retentionMs, now));
  }

  /**
   * The record's write to ride in the reservation's script, when the decision keys are in the money's slot
   * (one primary: every family shares the plain prefix); null on a cluster, where it is written on its own.
   */
  ride(record: DecisionRecord, retentionMs: number, now: number, log: Logger): DecisionRide | null {
    if (this.#store.familyPrefix('dec') !== this.#store.keyPrefix) return null;
    return new RidingRecord(this, record, this.#keys(record), putArgs(record, retentionMs, now), retentionMs, now, log);
  }

  #keys(record: DecisionRecord): [string, string] {
    return [`${this.#prefix}t`, `${this.#prefix}r:${record.decision_id}`];
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
