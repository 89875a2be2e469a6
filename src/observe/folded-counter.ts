/**
 * A prom-client counter for the per-call path, the counter's twin of folded-histogram.ts: increments are
 * added up by children kept per label set (`child(key, labels)`, made once), and the counter's series are
 * rebuilt from those totals through prom-client's own `reset` and `inc` when it is read (`/metrics`, the
 * workers' aggregation). The same series and values as a plain counter given the same increments
 * (test/observe/folded-counter.unit.test.ts), including a series incremented by 0 only.
 *
 * Why: prom-client's `inc` sorts, validates and hashes the label set on every increment; a small chat call
 * makes about seven (the request, the admission decision, the job's end, the settlement's tokens and
 * charge). Here an increment is one addition. `inc` on the counter itself still works, through the label
 * set's child.
 */
import { Counter, type LabelValues } from 'prom-client';
import { labelKey } from './folded-histogram.js';

/** One label set's running total. */
export class FoldedCounterChild<L extends string> {
  readonly labels: LabelValues<L>;
  total = 0;
  /** Incremented at least once (by 0 too): the series exists, as prom-client makes it on any inc. */
  touched = false;

  constructor(labels: LabelValues<L>) {
    this.labels = labels;
  }

  /** Adds `value` (1 when omitted); refuses what prom-client refuses. */
  inc(value?: number): void {
    if (value && !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (value !== undefined && value < 0) throw new Error('It is not possible to decrease a counter');
    this.total += value ?? 1;
    this.touched = true;
  }
}

type PromInc = (labels: object, value: number) => void;

export class FoldedCounter<L extends string = string> extends Counter<L> {
  readonly #children = new Map<string, FoldedCounterChild<L>>();
  readonly #names: string[];
  readonly #promInc: PromInc;

  constructor(config: { name: string; help: string; labelNames: readonly L[]; registers: NonNullable<ConstructorParameters<typeof Counter>[0]['registers']> }) {
    super({
      ...config,
      labelNames: [...config.labelNames],
      collect() {
        (this as FoldedCounter<L>).#fold();
      },
    });
    this.#names = [...config.labelNames];
    // prom-client's own increment, kept for the fold; the counter's `inc` counts through the children.
    this.#promInc = (this as unknown as { inc: PromInc }).inc.bind(this);
    const inc = (labels?: LabelValues<L> | number, value?: number): void => {
      if (labels === undefined || typeof labels === 'number') this.child('', {}).inc(labels);
      else this.child(labelKey(this.#names, labels), labels).inc(value);
    };
    (this as unknown as { inc: typeof inc }).inc = inc;
  }

  /** The child adding up increments of `labels` (keep it, or name the label set by a unique `key`). */
  child(key: string, labels: LabelValues<L>): FoldedCounterChild<L> {
    let c = this.#children.get(key);
    if (c === undefined) {
      // Validated once, by prom-client's own rules (an unknown label name throws here).
      this.#promInc({ ...labels }, 0);
      this.reset();
      c = new FoldedCounterChild<L>({ ...labels });
      this.#children.set(key, c);
    }
    return c;
  }

  /** Rebuilds the counter's series from the children's totals (run by prom-client before every read). */
  #fold(): void {
    this.reset();
    for (const c of this.#children.values()) if (c.touched) this.#promInc(c.labels, c.total);
  }
}
