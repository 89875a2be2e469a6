/**
 * One load run: autocannon, as a library, against one row's URL with the bench's per-request bodies.
 *
 *  - Saturation (`rate` unset): `connections` keep-alive connections, each sending its next request as
 *    soon as the previous answer is in. Throughput is 2xx answers per second of the run.
 *  - Fixed rate (`rate` set): autocannon's own rate options are not a fixed rate: each connection sends
 *    as fast as it can until its per-second quota is spent and then idles to the next second, so what they
 *    measure at "50 %" is queueing at saturation for half of every second. Instead a pacer releases send
 *    slots evenly (checked every millisecond, and at once when a slot is already due) and each autocannon
 *    client waits for a slot before it sends: requests arrive at the rate, spread over the second. When no
 *    connection is free for a due slot, the slot waits for one (as a user's request would wait), up to one
 *    second's worth of slots: after a stall the slots it held are sent as connections free up, each timed
 *    from when it was due (below). Slots older than that are dropped (no unbounded catch-up): the row cannot
 *    keep up, and the run reports the rate it achieved, flagged `overloaded`.
 *
 * A window ends at its deadline, unless `minAnswers` asks for more answers than came back by then: it then
 * stays open until they are in (or a generous cap passes), and its rate is over the time it really ran.
 *
 * Latency is recorded here, unrounded, from autocannon's per-response time (from the write of the request
 * to the last byte of the answer, measured with process.hrtime): autocannon's own histogram keeps whole
 * milliseconds, too coarse for a 0.3 ms budget.
 *
 * At a fixed rate the same answers are also timed from their slot's scheduled time (`fromIntended`): the
 * open-loop latency, free of coordinated omission. A request that waited for a free connection, or for the
 * load generator's own event loop, counts that wait there and not in `latency`, which starts at the write.
 */
import autocannon, { type Client } from 'autocannon';
import { stampNonce, type BodyTemplate } from './bodies.js';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  body: BodyTemplate;
  connections: number;
  durationSec: number;
  /** Requests per second to hold; unset = saturation. */
  rate?: number;
  /**
   * The fewest 2xx answers the run counts before it ends (default 0). When the window closes with fewer,
   * it stays open for the answers still in flight (and those after them) until this many are in or
   * `capSec` has passed; throughput is then over the window as it actually ran. A short window on a loaded
   * machine can otherwise end before a single 100 KB answer is back, which says nothing about the row.
   */
  minAnswers?: number;
  /** How long an extended window may last in all, seconds (default 60). */
  capSec?: number;
  /**
   * Called for every counted 2xx answer: when it came (ms since the epoch), its latency (ms) and, at a fixed
   * rate, its latency from its slot's scheduled time (ms; NaN at saturation).
   */
  onAnswer?: (atMs: number, latencyMs: number, fromIntendedMs: number) => void;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  max: number;
}

export interface LoadResult {
  /** 2xx answers per second over the run. */
  rps: number;
  ok: number;
  /** Non-2xx answers, connection errors and timeouts. */
  errors: number;
  /** Status codes other than 2xx, with counts (for the report when a row fails). */
  statuses: Record<string, number>;
  durationSec: number;
  /** Latency of 2xx answers, in milliseconds. */
  latency: Percentiles;
  /**
   * Fixed rate only: the latency of the same answers from the time their send slot was due (not from when
   * the request was written), so a wait for a free connection or for the load generator counts.
   */
  fromIntended?: Percentiles;
  targetRate?: number;
  /** True when a fixed rate could not be held (achieved < 95 % of target). */
  overloaded?: boolean;
  /** CPU that processes other than the bench's used meanwhile, in cores (cpu-usage.ts); null if unknown. */
  foreignCores?: number | null;
  /** CPU the hypervisor gave to other virtual machines meanwhile (steal), in cores; null if unknown. */
  stealCores?: number | null;
  /** True when the window ran past its deadline to collect `minAnswers` answers (load.ts). */
  extended?: boolean;
  /** True when this is a second attempt, the first having been contended. */
  retried?: boolean;
  /**
   * CPU time the server under test used per 2xx answer, ms (all its threads; 10 ms ticks over the run).
   * Unlike throughput, this hardly moves when other processes compete for the machine.
   */
  serverCpuMsPerReq?: number;
  /** The same for redis-server (R3 only): what the store costs per call. */
  redisCpuMsPerReq?: number;
}

/** Evenly spaced send slots at `rate` per second; clients wait in a FIFO for one. */
class Pacer {
  readonly #rate: number;
  readonly #slack: number;
  readonly #queue: Array<(intendedAt: number) => void> = [];
  readonly #timer: NodeJS.Timeout;
  #start = performance.now();
  #released = 0;

  constructor(rate: number, slack: number) {
    this.#rate = rate;
    this.#slack = slack;
    this.#timer = setInterval(() => this.#drain(), 1);
  }

  #due(): number {
    const due = Math.floor(((performance.now() - this.#start) / 1000) * this.#rate);
    // Slots nobody could take (all connections busy) wait, up to `slack` of them; older ones are dropped.
    if (due - this.#released > this.#slack) this.#released = due - this.#slack;
    return due;
  }

  /** When the slot just released was due (performance.now() time): slot k falls at k / rate. */
  #slotTime(): number {
    return this.#start + (this.#released * 1000) / this.#rate;
  }

  #drain(): void {
    if (this.#queue.length === 0) return;
    const due = this.#due();
    while (this.#released < due && this.#queue.length > 0) {
      this.#released++;
      this.#queue.shift()!(this.#slotTime());
    }
  }

  /** Runs `send` now if a slot is due, else when the next one is; `send` gets the slot's scheduled time. */
  take(send: (intendedAt: number) => void): void {
    if (this.#queue.length === 0 && this.#released < this.#due()) {
      this.#released++;
      send(this.#slotTime());
    } else {
      this.#queue.push(send);
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#queue.length = 0;
  }
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function summarise(values: Float64Array): Percentiles {
  const sorted = values.slice().sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
}

/** A growable array of doubles. */
class Samples {
  #buf = new Float64Array(1 << 14);
  #n = 0;
  push(v: number): void {
    if (this.#n === this.#buf.length) {
      const next = new Float64Array(this.#buf.length * 2);
      next.set(this.#buf);
      this.#buf = next;
    }
    this.#buf[this.#n++] = v;
  }
  get values(): Float64Array {
    return this.#buf.subarray(0, this.#n);
  }
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  // The schedule holds up to a second of missed slots (at least one per connection): a stall shorter than
  // that is counted whole in the open-loop latency, not omitted from it (coordinated omission).
  const pacer = spec.rate ? new Pacer(spec.rate, Math.max(spec.connections, Math.ceil(spec.rate))) : null;
  const latencies = new Samples();
  const fromIntended = new Samples();
  const statuses: Record<string, number> = {};
  let ok = 0;
  let errors = 0;
  // One body buffer per connection, re-stamped in place: autocannon copies it into the request it writes.
  const setupRequest = (req: Record<string, unknown>, context: Record<string, unknown>) => {
    let buf = context['body'] as Buffer | undefined;
    if (!buf) context['body'] = buf = Buffer.from(spec.body.template);
    return { ...req, body: stampNonce(spec.body, buf) };
  };
  /** Each client's request in flight: when its slot was due (autocannon sends one at a time per client). */
  const intended = new WeakMap<object, number>();
  const minAnswers = spec.minAnswers ?? 0;
  const capSec = Math.max(spec.capSec ?? 60, spec.durationSec);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const deadline = started + spec.durationSec * 1000;
    // Answers after the window closes (autocannon stops at its next sample tick) are not counted. It closes
    // at the deadline, or, when that came with fewer than `minAnswers` answers, at the answer that makes
    // them up (or at the cap, when autocannon ends the run itself).
    let closedAt: number | null = null;
    let extended = false;
    const close = () => {
      if (closedAt !== null) return;
      closedAt = performance.now();
      instance.stop();
    };
    const open = () => closedAt === null && (extended || performance.now() <= deadline);
    const instance = autocannon(
      {
        url: spec.url,
        method: 'POST',
        connections: spec.connections,
        duration: minAnswers > 0 ? capSec : spec.durationSec,
        sampleInt: 50,
        timeout: 30,
        headers: { 'content-type': 'application/json', ...spec.headers },
        requests: [{ method: 'POST', setupRequest }],
        setupClient: pacer
          ? (client: Client) => {
              const send = client._doRequest;
              client._doRequest = (...args: unknown[]) =>
                pacer.take((intendedAt) => {
                  if (client.destroyed) return;
                  intended.set(client, intendedAt);
                  send.apply(client, args);
                });
            }
          : undefined,
      },
      (err) => {
        clearTimeout(timer);
        pacer?.stop();
        if (err) return reject(err);
        const durationSec = extended ? ((closedAt ?? performance.now()) - started) / 1000 : spec.durationSec;
        const result: LoadResult = { rps: ok / durationSec, ok, errors, statuses, durationSec, latency: summarise(latencies.values) };
        if (extended) result.extended = true;
        if (spec.rate) {
          result.fromIntended = summarise(fromIntended.values);
          result.targetRate = spec.rate;
          result.overloaded = result.rps < 0.95 * spec.rate;
        }
        resolve(result);
      },
    );
    const timer = setTimeout(() => {
      if (minAnswers === 0) return;
      if (ok >= minAnswers) close();
      else extended = true;
    }, spec.durationSec * 1000);
    instance.on('response', (client: object, statusCode: number, _bytes: number, responseTime: number) => {
      if (!open()) return;
      if (statusCode >= 200 && statusCode < 300) {
        ok++;
        latencies.push(responseTime);
        const now = performance.now();
        const due = intended.get(client);
        // Never below the write-to-answer time (the slot can only precede the write).
        const queued = due === undefined ? Number.NaN : Math.max(responseTime, now - due);
        if (due !== undefined) fromIntended.push(queued);
        spec.onAnswer?.(performance.timeOrigin + now, responseTime, queued);
      } else {
        errors++;
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      }
      if (extended && ok >= minAnswers) close();
    });
    instance.on('reqError', () => {
      if (open()) errors++;
    });
  });
}
