/** What the listeners are built from: the store, the live runtime, the meter, the logger, the capabilities and the hosts' origins. */
import type { RuntimeHolder } from '../config/reloader.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import type { Logger } from '../log.js';
import type { JobStore } from '../jobs/store.js';
import type { JobEngine } from '../jobs/engine.js';
import type { ReviewStore } from '../reviews/store.js';
import type { HistoryRecorder } from '../secure/recorder.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import type { HostName } from '../config/types.js';

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
  /** Rate limits shared by every instance (src/ratelimit). */
  limiter: RateLimiter;
  /**
   * The public origin of every host (`listeners.<name>.url`, or http://localhost:<bound port>), known once
   * every listener is bound: what a browser sends as `Origin`, the passkey relying party, links between hosts.
   */
  origins: Record<HostName, string>;
}
