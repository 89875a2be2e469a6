/** What the listeners are built from: the store, the live runtime, the meter and the logger. */
import type { RuntimeHolder } from '../config/reloader.js';
import type { Store } from '../store/store.js';
import type { Meter } from '../metering/meter.js';
import type { Logger } from '../log.js';
import type { JobStore } from '../jobs/store.js';
import type { JobEngine } from '../jobs/engine.js';

export interface Deps {
  store: Store;
  holder: RuntimeHolder;
  meter: Meter;
  log: Logger;
  jobs: JobStore;
  engine: JobEngine;
}
