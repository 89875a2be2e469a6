/**
 * Store failures that callers must tell apart from bugs. `StoreUnavailable` means the backing store could not
 * be asked (unreachable, timed out, closed): the gateway fails closed on it with 503 `store-unavailable`
 * rather than admitting on a guess. `StoreConflict` (a create met an existing record) lives with the
 * interface in `store.ts` and is re-exported here so callers can import both from one place.
 */
export { StoreConflict } from './store.js';

export class StoreUnavailable extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailable';
  }
}

/**
 * The store answered, but refuses something the gateway needs of it (HELLO 3 for RESP3, CLIENT TRACKING for
 * the identity cache): no retry will help, only a different server or configuration. Startup exits on it with
 * the one-line message, as on a configuration error.
 */
export class StoreRefused extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreRefused';
  }
}
