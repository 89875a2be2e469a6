/**
 * When a runtime goes live, its documents go into the version history (history.ts): at start, and after
 * each reload that swapped a runtime in (RuntimeHolder.onSwap). A failed write (the store is down) is
 * logged and retried on the next GET /v1/secure with the time the runtime really went live, so a reviewer
 * never sees a version without its date.
 */
import type { Runtime } from '../config/compile.js';
import type { Logger } from '../log.js';
import type { DocumentRef, DocumentVersion, HistoryStore } from './history.js';

/** The reviewer-facing documents of a runtime, by content hash. */
export function documentRefs(runtime: Runtime): DocumentRef[] {
  const b = runtime.bundle;
  const doc = (document: string, d: { version: string; sha256: string }): DocumentRef => ({ document, version: d.version, sha256: d.sha256 });
  return [
    doc('catalog', b.models),
    doc('compliance', b.compliance),
    doc('firewall', b.firewall),
    doc('guardrails', b.guardrails),
    doc('policy', runtime.policy),
    doc('rungs', b.rungs),
  ];
}

export class HistoryRecorder {
  readonly #store: HistoryStore;
  readonly #log: Logger;
  readonly #liveAt = new WeakMap<Runtime, string>();
  readonly #recorded = new WeakSet<Runtime>();

  constructor(store: HistoryStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** `runtime` went live at `at`: record its documents. Never throws; a failure is retried by `history`. */
  async wentLive(runtime: Runtime, at = new Date().toISOString()): Promise<void> {
    this.#liveAt.set(runtime, at);
    try {
      await this.#record(runtime);
    } catch (err) {
      this.#log.warn('secure.history.record.failed', { error: (err as Error).name, versions: runtime.versions });
    }
  }

  /** The whole history, recording `runtime` first if that has not succeeded yet. Rejects when the store does. */
  async history(runtime: Runtime): Promise<DocumentVersion[]> {
    if (this.#recorded.has(runtime)) return this.#store.list();
    return this.#record(runtime);
  }

  async #record(runtime: Runtime): Promise<DocumentVersion[]> {
    let at = this.#liveAt.get(runtime);
    if (at === undefined) this.#liveAt.set(runtime, (at = new Date().toISOString()));
    const history = await this.#store.record(documentRefs(runtime), at);
    this.#recorded.add(runtime);
    return history;
  }
}
