/** What the billing capability works with: the main store, its own store, the live runtime, the meter, the processor. */
import type { RuntimeHolder } from '../config/reloader.js';
import type { Logger } from '../log.js';
import type { Meter } from '../metering/meter.js';
import type { Store } from '../store/store.js';
import type { HostName } from '../config/types.js';
import type { BillingStore } from './store.js';
import type { PaymentProcessor } from './stripe.js';

export interface BillingDeps {
  store: Store;
  billing: BillingStore;
  holder: RuntimeHolder;
  meter: Meter;
  log: Logger;
  /** Null when STRIPE_SECRET_KEY is unset. */
  stripe: PaymentProcessor | null;
  /** Public origins of the hosts: a person returns from a hosted page to the console's. */
  origins: Record<HostName, string>;
}
