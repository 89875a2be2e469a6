/**
 * Decision logs bound to receipts, wired once per gateway: the admission stage hands each decision here
 * (`record`), which builds its decision record (record.ts), names it on the call (`call.decisionRecord`,
 * which the receipt carries), stores it under the retention the configuration names, and asks the shadow
 * policy, if one is configured, the same question. `keep` stores the content of every version a runtime
 * decides with, when it goes live, so the version history can serve anything a record names.
 *
 * Storing never holds the call up and never fails it: a failure is logged, never thrown into the call. The
 * write is sent at once (on the store's one connection, ahead of the receipt's) — or, for a call that goes
 * on to its reservation at once, when the store can have it written there (Redis on one primary), it rides
 * in the reservation's own script (`call.decisionRide`, taken by the meter stage), written first and
 * whatever the reservation's outcome: the same round trip as before, one command fewer.
 */
import type { Runtime } from '../config/compile.js';
import type { Logger } from '../log.js';
import type { PolicyInput } from '../policy/engine.js';
import type { Call } from '../call/call.js';
import { DECISION_PATH, decisionId, ERASED, recordSha256, type DecisionRecord, type RecordKind } from './record.js';
import type { DecisionStore } from './store.js';
import { runtimeFacts, runtimeVersions } from './versions.js';
import { answerOf, decisionChanges, Shadow, shadowMetrics } from './shadow.js';
import { decisionVersions } from '../config/compile.js';
import { isoTime } from '../iso-time.js';

const DEFAULT_RETENTION_DAYS = 30;
const DAY_MS = 86_400_000;

/** The retention of decision records (`policy.decisionRetentionDays`, default 30 days). */
const retentionMs = (runtime: Runtime): number => (runtime.gateway.policy?.decisionRetentionDays ?? DEFAULT_RETENTION_DAYS) * DAY_MS;

export class Decisions {
  readonly store: DecisionStore;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #shadow: Shadow;

  constructor(store: DecisionStore, log: Logger, now: () => number = Date.now) {
    this.store = store;
    this.#log = log;
    this.#now = now;
    this.#shadow = new Shadow(log);
  }

  /**
   * The admission stage took `call.decision` on `input`: record it, and ask the shadow. Never throws.
   * `reserving`: the call goes on to its reservation at once (the meter stage follows synchronously), so
   * the record may ride in it.
   */
  record(call: Call, input: PolicyInput, reserving = false): void {
    try {
      const record = this.#build(call, input, 'live');
      call.decisionRecord = { id: record.decision_id, sha256: recordSha256(record) };
      const ride = reserving ? (this.store.ride?.(record, retentionMs(call.runtime), this.#now(), this.#log) ?? null) : null;
      if (ride) call.decisionRide = ride;
      else this.#put(record, call.runtime);
      if (call.runtime.gateway.policy?.shadow) void this.#shadowOf(call, input, record);
    } catch (err) {
      this.#log.warn('decisions.record.failed', { call: call.id, error: (err as Error).message });
    }
  }

  /** Stores the content of every version `runtime` decides with (idempotent). Never throws. */
  async keep(runtime: Runtime): Promise<void> {
    const { versions, missing } = runtimeVersions(runtime);
    if (missing.length > 0) this.#log.warn('decisions.versions.changed-on-disk', { documents: missing });
    try {
      await Promise.all(versions.map((v) => this.store.putVersion(v)));
    } catch (err) {
      this.#log.warn('decisions.versions.store-failed', { error: (err as Error).name });
    }
  }

  #build(call: Call, input: PolicyInput, kind: RecordKind): DecisionRecord {
    const runtime = call.runtime;
    const facts = runtimeFacts(runtime);
    const valid = call.valid;
    // Members in key order (UTF-16 code units), and those of the objects built here: the record's canonical
    // text is then JSON.stringify's of it as it is, with nothing to reorder (src/canonical-json.ts).
    return {
      bundles: { admission: { revision: runtime.policy.sha256 } },
      call_id: call.id,
      decision_id: decisionId(call.id, kind),
      documents: facts.documents,
      erased: [...ERASED],
      input,
      labels: { app: 'portcullis', kind },
      masked: [],
      path: DECISION_PATH,
      result: call.decision!,
      sizes: { inputChars: valid?.inputChars ?? 0, inputTokens: valid?.inputTokens ?? 0, messages: valid?.request.messages.length ?? 0 },
      timestamp: isoTime(this.#now()),
      versions: decisionVersions(runtime.versions),
    };
  }

  #put(record: DecisionRecord, runtime: Runtime): void {
    this.store.put(record, retentionMs(runtime), this.#now()).catch((err: unknown) => {
      this.#log.warn('decisions.store-failed', { decision: record.decision_id, error: (err as Error).name });
    });
  }

  async #shadowOf(call: Call, input: PolicyInput, live: DecisionRecord): Promise<void> {
    try {
      const answer = await this.#shadow.decide(call.runtime, input);
      if (!answer) return;
      const changes = decisionChanges(live.result, answer.decision);
      shadowMetrics.decisions.inc({ agreement: changes.length === 0 ? 'agree' : 'disagree' });
      if (changes.length === 0) return;
      shadowMetrics.disagreements.inc({ live: answerOf(live.result), shadow: answerOf(answer.decision) });
      this.#put(
        {
          ...live,
          decision_id: decisionId(call.id, 'shadow'),
          result: answer.decision,
          bundles: { admission: { revision: answer.policy.sha256 } },
          labels: { app: 'portcullis', kind: 'shadow', changed: changes.join(',') },
          versions: { ...live.versions, ...answer.versions },
          documents: answer.documents,
          shadow_of: live.decision_id,
        },
        call.runtime,
      );
    } catch (err) {
      this.#log.warn('decisions.shadow.failed', { call: call.id, error: (err as Error).message });
    }
  }
}
