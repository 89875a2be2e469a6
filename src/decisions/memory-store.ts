/** Decision records and version contents in one process, beside the memory store: the Redis store's semantics, copied in and out. */
import { recordText, type DecisionRecord } from './record.js';
import type { DecisionStore, StoredVersion } from './store.js';

const copy = <T>(v: T): T => structuredClone(v);

export class MemoryDecisionStore implements DecisionStore {
  readonly #records = new Map<string, { record: DecisionRecord; at: number; expiresAt: number }>();
  readonly #versions = new Map<string, StoredVersion>();
  readonly #reports = new Map<string, string>();

  async put(record: DecisionRecord, retentionMs: number, now: number): Promise<void> {
    this.#sweep(now);
    if (this.#records.has(record.decision_id)) return;
    // Kept as its canonical text reads back, as Redis keeps it: the same bytes answered from either store.
    this.#records.set(record.decision_id, {
      record: JSON.parse(recordText(record)) as DecisionRecord,
      at: Date.parse(record.timestamp),
      expiresAt: now + retentionMs,
    });
  }

  async get(id: string): Promise<DecisionRecord | null> {
    const e = this.#records.get(id);
    // Expired records go at the next write or listing, on the gateway's clock (which tests move).
    return e ? copy(e.record) : null;
  }

  async list(fromMs: number, toMs: number, limit: number, now: number): Promise<DecisionRecord[]> {
    this.#sweep(now);
    return [...this.#records.values()]
      .filter((e) => e.at >= fromMs && e.at < toMs)
      .sort((a, b) => a.at - b.at || (a.record.decision_id < b.record.decision_id ? -1 : 1))
      .slice(0, limit)
      .map((e) => copy(e.record));
  }

  async putVersion(v: StoredVersion): Promise<void> {
    const key = `${v.document} ${v.sha256}`;
    if (!this.#versions.has(key)) this.#versions.set(key, copy(v));
  }

  async getVersion(document: string, sha256: string): Promise<StoredVersion | null> {
    const v = this.#versions.get(`${document} ${sha256}`);
    return v ? copy(v) : null;
  }

  async noteReport(fingerprint: string, at: string): Promise<void> {
    this.#reports.set(fingerprint, at);
  }

  async reported(fingerprint: string): Promise<string | null> {
    return this.#reports.get(fingerprint) ?? null;
  }

  #sweep(now: number): void {
    for (const [id, e] of this.#records) if (e.expiresAt <= now) this.#records.delete(id);
  }
}
