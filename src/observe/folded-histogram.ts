/**
 * A prom-client histogram for the per-call path: its observations are counted by bound children (one per
 * label set, made once) in typed arrays, and folded into the histogram when it is read (`/metrics`, the
 * workers' aggregation) — the same series, buckets, sums and counts as a plain prom-client histogram fed
 * the same values (test/observe/folded-histogram.unit.test.ts holds it to that).
 *
 * Why: prom-client's own `observe` validates and hashes the label set on every observation, even through a
 * child; a small chat call makes about fifteen (a stage histogram per stage, the request's, the upstream's),
 * which was a few per cent of its CPU. Here an observation is a bucket search and three additions.
 *
 * The fold rebuilds the histogram's series from the children's running totals on each read, through
 * prom-client's `reset`/`zero` and the bucket table `zero` makes (its internal `hashMap`; prom-client is
 * pinned, and the equivalence test fails if that table changes shape). prom-client's `observe` and
 * `startTimer` still work, through the label set's child (slower than a child kept by the caller).
 */
import { Histogram, type LabelValues } from 'prom-client';

/** A label set's key among a metric's children: its values in label-name order. */
export function labelKey(names: readonly string[], labels: object): string {
  return names
    .map((n) => {
      const v = (labels as Record<string, string | number | undefined>)[n];
      return v === undefined ? '' : String(v);
    })
    .join('\u0000');
}

/** One label set's running totals. */
export class FoldedChild<L extends string> {
  readonly labels: LabelValues<L>;
  readonly #bounds: Float64Array;
  /** counts[i]: observations in (bounds[i-1], bounds[i]]; the last slot, above every bound (+Inf only). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(labels: LabelValues<L>, bounds: Float64Array) {
    this.labels = labels;
    this.#bounds = bounds;
    this.counts = new Float64Array(bounds.length + 1);
  }

  /** Counts one observation (seconds); a value that is not a finite number is refused, as prom-client refuses it. */
  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const b = this.#bounds;
    let i = 0;
    while (i < b.length && value > b[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

interface BucketTable {
  labels: object;
  bucketValues: Record<string, number>;
  sum: number;
  count: number;
}

export class FoldedHistogram<L extends string = string> extends Histogram<L> {
  readonly #children = new Map<string, FoldedChild<L>>();
  readonly #bounds: Float64Array;
  readonly #names: string[];

  constructor(config: {
    name: string;
    help: string;
    labelNames: readonly L[];
    buckets: number[];
    registers: NonNullable<ConstructorParameters<typeof Histogram>[0]['registers']>;
  }) {
    super({
      ...config,
      labelNames: [...config.labelNames],
      collect() {
        (this as FoldedHistogram<L>).#fold();
      },
    });
    this.#bounds = Float64Array.from(this.upperBoundsOf());
    const names = [...config.labelNames];
    this.#names = names;
    // prom-client's own observe (and startTimer, which calls it) counted through the label set's child
    // instead, so no observation can go around the fold: slower than a kept child, never lost.
    const observe = (labels: LabelValues<L> | number, value?: number): void => {
      if (typeof labels === 'number') this.child('', {}).observe(labels);
      else this.labels(labels).observe(value!);
    };
    (this as unknown as { observe: typeof observe }).observe = observe;
  }

  private upperBoundsOf(): number[] {
    return (this as unknown as { upperBounds: number[] }).upperBounds;
  }

  /**
   * The child counting observations of `labels`, made once per label set (keep it: looking it up by a
   * label object on every observation is what this class saves). `key` names the label set uniquely.
   */
  child(key: string, labels: LabelValues<L>): FoldedChild<L> {
    let c = this.#children.get(key);
    if (c === undefined) {
      // Validated once, by prom-client's own rules (an unknown label name throws here).
      Histogram.prototype.labels.call(this, labels);
      c = new FoldedChild<L>({ ...labels }, this.#bounds);
      this.#children.set(key, c);
    }
    return c;
  }

  /** prom-client's bound child, counting through this label set's child (`child` is the cheaper way). */
  override labels(...args: [Partial<Record<L, string | number>>] | string[]): { observe(value: number): void; startTimer(): () => number } {
    const given = args[0];
    const labels = (typeof given === 'object' ? given : Object.fromEntries(this.#names.map((n, i) => [n, args[i]]))) as LabelValues<L>;
    const c = this.child(labelKey(this.#names, labels), labels);
    return {
      observe: (value: number) => c.observe(value),
      startTimer: () => {
        const started = performance.now();
        return () => {
          const seconds = (performance.now() - started) / 1000;
          c.observe(seconds);
          return seconds;
        };
      },
    };
  }

  /** Rebuilds the histogram's series from the children's totals (run by prom-client before every read). */
  #fold(): void {
    this.reset();
    const byLabels = new Map<object, FoldedChild<L>>();
    for (const c of this.#children.values()) {
      if (c.count === 0) continue;
      this.zero(c.labels);
      byLabels.set(c.labels, c);
    }
    const tables = (this as unknown as { hashMap: Record<string, BucketTable> }).hashMap;
    const bounds = this.upperBoundsOf();
    for (const t of Object.values(tables)) {
      const c = byLabels.get(t.labels);
      if (!c) continue;
      for (let i = 0; i < bounds.length; i++) t.bucketValues[bounds[i]!] = c.counts[i]!;
      t.sum = c.sum;
      t.count = c.count;
    }
  }
}
