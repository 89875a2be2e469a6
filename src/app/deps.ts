/** What the listeners are built from: the store, the live runtime, the meter and the logger. */
import type { RuntimeHolder } from '../config/reloader.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import type { Logger } from '../log.js';
import type { JobStore } from '../jobs/store.js';
import type { JobEngine } from '../jobs/engine.js';
import type { ReviewStore } from '../reviews/store.js';
import type { HistoryRecorder } from '../secure/recorder.js';
import type { Receipts } from '../receipts/service.js';

export interface Deps {
  store: Store;
  holder: RuntimeHolder;
  meter: Meter;
  log: Logger;
  jobs: JobStore;
  engine: JobEngine;
  /** The operator review list of flagged calls (src/reviews). */
  reviews: ReviewStore;
  /** The document version history GET /v1/secure serves (src/secure). */
  history: HistoryRecorder;
  /** The receipt log: its storage, key and signer (src/receipts). */
  receipts: Receipts;
}
