/**
 * The version history in Redis, beside the store's keys and on its connection.
 * Layout under the prefix (familyPrefix('dh') on a cluster, store/redis.ts):
 *   dh    hash  "<document> <sha256>" -> {document, version, sha256} JSON, written once (HSETNX)
 *   dht   hash  "<document> <sha256>" -> ISO time it first went live; only ever moved earlier
 * One script records and reads back (ISO-8601 UTC times of one format compare as strings).
 */
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';
import { historyField, sortHistory, type DocumentRef, type DocumentVersion, type HistoryStore } from './history.js';

const RECORD = loadLua(import.meta.url, 'lua/record.lua');
const LIST = loadLua(import.meta.url, 'lua/list.lua');

function decode(reply: unknown): DocumentVersion[] {
  const [docs, times] = reply as [string[], string[]];
  const since = new Map<string, string>();
  for (let i = 0; i < times.length; i += 2) since.set(times[i]!, times[i + 1]!);
  const out: DocumentVersion[] = [];
  for (let i = 0; i < docs.length; i += 2) {
    const ref = JSON.parse(docs[i + 1]!) as DocumentRef;
    const liveSince = since.get(docs[i]!);
    if (liveSince) out.push({ document: ref.document, version: ref.version, sha256: ref.sha256, liveSince });
  }
  return sortHistory(out);
}

export class RedisHistoryStore implements HistoryStore {
  readonly #store: RedisStore;
  readonly #keys: string[];

  constructor(store: RedisStore) {
    this.#store = store;
    this.#keys = [`${store.familyPrefix('dh')}dh`, `${store.familyPrefix('dh')}dht`];
  }

  async record(refs: readonly DocumentRef[], at: string): Promise<DocumentVersion[]> {
    const args = [at];
    for (const r of refs) args.push(historyField(r), JSON.stringify({ document: r.document, version: r.version, sha256: r.sha256 }));
    return decode(await this.#store.runScript('history.record', RECORD, this.#keys, args));
  }

  async list(): Promise<DocumentVersion[]> {
    return decode(await this.#store.runScript('history.list', LIST, this.#keys, []));
  }
}
