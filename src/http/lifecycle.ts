/**
 * Where a gateway process is in its life, shared by all its listeners: serving, or draining after SIGTERM
 * (readiness false, so the balancer stops sending; calls in flight finish). It also counts the requests in
 * flight on every listener, so shutdown can wait for them to be answered within its grace period.
 */
export class Lifecycle {
  #draining = false;
  #inFlight = 0;
  #idle: Array<() => void> = [];

  get draining(): boolean {
    return this.#draining;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  drain(): void {
    this.#draining = true;
  }

  enter(): void {
    this.#inFlight++;
  }

  leave(): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (this.#inFlight === 0) for (const wake of this.#idle.splice(0)) wake();
  }

  /** Resolves true once no request is in flight, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      timer.unref();
      this.#idle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
