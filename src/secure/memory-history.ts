/** The version history in one process, beside the memory store: the Redis history's semantics, copied in and out. */
import { historyField, sortHistory, type DocumentRef, type DocumentVersion, type HistoryStore } from './history.js';

export class MemoryHistoryStore implements HistoryStore {
  readonly #entries = new Map<string, DocumentVersion>();

  async record(refs: readonly DocumentRef[], at: string): Promise<DocumentVersion[]> {
    for (const r of refs) {
      const key = historyField(r);
      const known = this.#entries.get(key);
      if (!known) this.#entries.set(key, { document: r.document, version: r.version, sha256: r.sha256, liveSince: at });
      else if (at < known.liveSince) known.liveSince = at;
    }
    return this.list();
  }

  async list(): Promise<DocumentVersion[]> {
    return sortHistory([...this.#entries.values()].map((e) => ({ ...e })));
  }
}
