/**
 * Store failures that callers must tell apart from bugs. `StoreUnavailable` means the backing store could not
 * be asked (unreachable, timed out, closed): the gateway fails closed on it with 503 `store-unavailable`
 * rather than admitting on a guess. `StoreConflict` (a create met an existing record) lives with the
 * interface in `store.ts` and is re-exported here so callers can import both from one place.
 *
 * What a store failure means to a request is said here, once (`storeGatewayError`, `isStoreOutage`): the
 * single exit answers with it, and the challenge ceremony gives back what a request took when it failed on
 * an outage; two copies of the mapping could drift, and a failure answered 503 would then keep a caller's
 * challenge spent.
 */
import { GatewayError } from '../errors.js';

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

/**
 * A store failure as the error table's answer, or null when the error is not one the store maps: an outage
 * (`StoreUnavailable`) is 503 `store-unavailable`. A refusal (`StoreRefused`) is not mapped: it is a startup
 * failure, and met mid-request it is a bug like any other.
 */
export function storeGatewayError(err: unknown): GatewayError | null {
  if (err instanceof StoreUnavailable) return new GatewayError('store-unavailable');
  return null;
}

/** Whether a request failed on a store outage: the store's own error, or one already answered as such. */
export function isStoreOutage(err: unknown): boolean {
  const answered = err instanceof GatewayError ? err : storeGatewayError(err);
  return answered?.code === 'store-unavailable';
}
