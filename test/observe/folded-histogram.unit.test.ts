/**
 * The histograms every call adds to count through bound children and are folded into prom-client's
 * histogram when read (src/observe/folded-histogram.ts): what `/metrics` shows must be exactly what a plain
 * prom-client histogram fed the same values shows — buckets, +Inf, sums and counts, per label set, read
 * after read — whichever way the values came in (a kept child, `observe`, `labels`, `startTimer`).
 */
import { expect } from 'chai';
import { Histogram, Registry } from 'prom-client';
import { FoldedHistogram } from '../../src/observe/folded-histogram.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 840];

function pair() {
  const plainRegistry = new Registry();
  const foldedRegistry = new Registry();
  const config = { name: 'x_seconds', help: 'x', labelNames: ['stage', 'route'] as const, buckets: BUCKETS };
  const plain = new Histogram({ ...config, labelNames: [...config.labelNames], registers: [plainRegistry] });
  const folded = new FoldedHistogram({ ...config, registers: [foldedRegistry] });
  return { plain, folded, plainRegistry, foldedRegistry };
}

/** A deterministic spread of values: in every bucket, on the bounds themselves, above the last, and zero. */
function values(n: number): number[] {
  const out = [0, ...BUCKETS, 841, 1e6];
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    out.push((x / 2 ** 31) ** 4 * 1000);
  }
  return out;
}

describe('folded histograms read as prom-client histograms', () => {
  it('show the same series as a plain histogram, read after read, whichever way values came in', async () => {
    const { plain, folded, plainRegistry, foldedRegistry } = pair();
    const kept = folded.child('scan\u0000a', { stage: 'scan', route: 'a' });
    const vs = values(3000);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < vs.length; i++) {
        const v = vs[i]! * (round + 1);
        const way = i % 4;
        if (way === 0) {
          kept.observe(v);
          plain.observe({ stage: 'scan', route: 'a' }, v);
        } else if (way === 1) {
          folded.observe({ stage: 'admit', route: 'a' }, v);
          plain.observe({ stage: 'admit', route: 'a' }, v);
        } else if (way === 2) {
          folded.labels({ stage: 'meter', route: 'b' }).observe(v);
          plain.labels({ stage: 'meter', route: 'b' }).observe(v);
        } else {
          folded.labels('scan', 'a').observe(v);
          plain.labels('scan', 'a').observe(v);
        }
      }
      expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
      expect(await foldedRegistry.getMetricsAsJSON()).to.deep.equal(await plainRegistry.getMetricsAsJSON());
    }
  });

  it('times with startTimer into the right series, and refuses what prom-client refuses', async () => {
    const { folded, foldedRegistry } = pair();
    const end = folded.startTimer({ stage: 'wait', route: 'r' });
    end();
    const json = (await foldedRegistry.getMetricsAsJSON())[0]!;
    const count = (json.values as Array<{ metricName?: string; value: number; labels: object }>).find((v) => v.metricName === 'x_seconds_count')!;
    expect(count.value).to.equal(1);
    expect(count.labels).to.deep.equal({ stage: 'wait', route: 'r' });
    expect(() => folded.child('k', { stage: 'a', nope: 'b' } as never)).to.throw();
    expect(() => folded.child('k2', { stage: 'a', route: 'b' }).observe(Number.NaN)).to.throw(TypeError);
  });

  it('shows nothing for a label set never observed, as prom-client does', async () => {
    const { plain, folded, plainRegistry, foldedRegistry } = pair();
    folded.child('s', { stage: 's', route: 'r' });
    plain.labels({ stage: 's', route: 'r' });
    expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
  });
});
