/**
 * Durable acknowledgement for money: a settlement, a grant or a checkpoint is not answered until at least
 * `replicas` replicas of the master hold it (Redis `WAIT`), so a master that dies right after the reply
 * cannot take an acknowledged charge, receipt or log leaf with it: its promoted replica has them.
 *
 * `WAIT` covers every write made earlier on the same connection, and all of the store's commands share one
 * connection per master, so waits are grouped like a database's group commit: while one `WAIT` is out, the
 * writes that finish meanwhile join the next one, sent as soon as the first returns. One `WAIT` per
 * replica round trip, however many calls settle.
 *
 * What a caller sees when replicas do not confirm within `timeoutMs` (a replica down or far behind): the write
 * stands on the master, so the answer is given as usual; the shortfall is counted and logged, and the
 * receipt log's signer signs no checkpoint over leaves the replicas were not confirmed to hold (it tries
 * again on its next round), so no signed statement ever covers a write a failover could lose.
 */
export interface ReplicaAckOptions {
  /** Replicas that must confirm, asked at each round (it can follow the deployment); 0 confirms at once. */
  replicas(): number;
  timeoutMs: number;
  /** Sends `WAIT replicas timeoutMs` to the money master; resolves to the number of replicas that confirmed. */
  wait(replicas: number, timeoutMs: number): Promise<number>;
  /** Told about every round whose replicas fell short. */
  onShortfall?(confirmed: number, wanted: number): void;
}

export class ReplicaAcks {
  readonly #o: ReplicaAckOptions;
  /** The round on the wire, if any. */
  #inFlight: Promise<boolean> | null = null;
  /** The round the next writers join: sent when the one in flight returns. */
  #next: Promise<boolean> | null = null;

  constructor(options: ReplicaAckOptions) {
    this.#o = options;
  }

  /** Resolves true once the writes this caller made before calling are held by enough replicas, false when the timeout passed first. */
  acknowledge(): Promise<boolean> {
    if (this.#o.replicas() <= 0) return Promise.resolve(true);
    if (!this.#inFlight) return (this.#inFlight = this.#round());
    // A WAIT already sent may have been sent before this caller's write: join the next one.
    this.#next ??= this.#inFlight.then(
      () => this.#promote(),
      () => this.#promote(),
    );
    return this.#next;
  }

  #promote(): Promise<boolean> {
    this.#next = null;
    return (this.#inFlight = this.#round());
  }

  async #round(): Promise<boolean> {
    try {
      const wanted = this.#o.replicas();
      if (wanted <= 0) return true;
      const confirmed = await this.#o.wait(wanted, this.#o.timeoutMs);
      if (confirmed < wanted) this.#o.onShortfall?.(confirmed, wanted);
      return confirmed >= wanted;
    } finally {
      // The next round (if writers are waiting for one) starts from here; otherwise the line is idle.
      if (!this.#next) this.#inFlight = null;
    }
  }
}
