/**
 * The meter's money writes held until the store's replicas have them: a settlement, a receipt of a refused
 * call, a grant and a clawback are answered only after `store.acknowledgeWrites()` (store/replica-acks.ts),
 * so a client never holds a receipt, and an operator never sees a grant, that a failover right after could
 * lose. A decorator over either meter, so neither implementation carries the concern; reads pass through.
 */
import type { Store } from '../store/store.js';
import type { Meter } from './meter.js';

export class DurableMeter implements Meter {
  readonly #inner: Meter;
  readonly #store: Store;

  constructor(inner: Meter, store: Store) {
    this.#inner = inner;
    this.#store = store;
  }

  async #durable<T>(write: Promise<T>): Promise<T> {
    const done = await write;
    await this.#store.acknowledgeWrites();
    return done;
  }

  get kind(): Meter['kind'] {
    return this.#inner.kind;
  }

  today(): string {
    return this.#inner.today();
  }
  reserve(...a: Parameters<Meter['reserve']>): ReturnType<Meter['reserve']> {
    return this.#inner.reserve(...a);
  }
  settle(...a: Parameters<Meter['settle']>): ReturnType<Meter['settle']> {
    return this.#durable(this.#inner.settle(...a));
  }
  release(...a: Parameters<Meter['release']>): ReturnType<Meter['release']> {
    return this.#inner.release(...a);
  }
  record(...a: Parameters<Meter['record']>): ReturnType<Meter['record']> {
    return this.#durable(this.#inner.record(...a));
  }
  status(...a: Parameters<Meter['status']>): ReturnType<Meter['status']> {
    return this.#inner.status(...a);
  }
  usage(...a: Parameters<Meter['usage']>): ReturnType<Meter['usage']> {
    return this.#inner.usage(...a);
  }
  grant(...a: Parameters<Meter['grant']>): ReturnType<Meter['grant']> {
    return this.#durable(this.#inner.grant(...a));
  }
  grantOf(...a: Parameters<Meter['grantOf']>): ReturnType<Meter['grantOf']> {
    return this.#inner.grantOf(...a);
  }
  clawback(...a: Parameters<Meter['clawback']>): ReturnType<Meter['clawback']> {
    return this.#durable(this.#inner.clawback(...a));
  }
  sweep(...a: Parameters<Meter['sweep']>): ReturnType<Meter['sweep']> {
    return this.#inner.sweep(...a);
  }
  start(...a: Parameters<Meter['start']>): void {
    this.#inner.start(...a);
  }
  close(): Promise<void> {
    return this.#inner.close();
  }
}
