/**
 * The gateway's long-lived parts in one list: each is started in order and stopped in reverse (OPA's
 * plugins.Manager), so what a part needs is always started before it and stopped after it. Adding a part
 * is one `start` call at the point where its dependencies exist; its stop is written beside its start.
 *
 * A start that fails stops, in reverse, the parts already started, so a refused start (a port taken, the
 * store unreachable) leaves no connection or timer behind. `stop` runs once; later calls wait for the first.
 * A part that fails to stop does not keep the rest running; the first such failure is thrown at the end.
 */
export interface Service<T> {
  /** For the log line of a part that fails to stop. */
  name: string;
  start(): T | Promise<T>;
  stop(value: T): unknown;
}

export class Services {
  readonly #started: Array<{ name: string; stop: () => unknown }> = [];
  #stopping: Promise<void> | null = null;

  /** Starts one part and puts its stop on the list; if starting throws, every part started so far is stopped. */
  async start<T>(service: Service<T>): Promise<T> {
    if (this.#stopping) throw new Error(`cannot start ${service.name}: the gateway is stopping`);
    let value: T;
    try {
      value = await service.start();
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.#started.push({ name: service.name, stop: () => service.stop(value) });
    return value;
  }

  /** Stops every started part, the last started first. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      let failure: { name: string; err: unknown } | null = null;
      for (const { name, stop } of this.#started.reverse()) {
        try {
          await stop();
        } catch (err) {
          failure ??= { name, err };
        }
      }
      if (failure) throw new Error(`${failure.name} failed to stop`, { cause: failure.err });
    })();
    return this.#stopping;
  }
}
