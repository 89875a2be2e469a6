/**
 * The counters every call adds to count through children kept per label set and are folded into
 * prom-client's counter when read (src/observe/folded-counter.ts): what `/metrics` shows must be exactly
 * what a plain prom-client counter given the same increments shows — every series and value, a series
 * incremented by 0 only included — read after read, whichever way the increments came in.
 */
import { expect } from 'chai';
import { Counter, Registry } from 'prom-client';
import { FoldedCounter } from '../../src/observe/folded-counter.js';

function pair(labelNames: readonly string[]) {
  const plainRegistry = new Registry();
  const foldedRegistry = new Registry();
  const plain = new Counter({ name: 'y_total', help: 'y', labelNames: [...labelNames], registers: [plainRegistry] });
  const folded = new FoldedCounter({ name: 'y_total', help: 'y', labelNames, registers: [foldedRegistry] });
  return { plain, folded, plainRegistry, foldedRegistry };
}

describe('folded counters read as prom-client counters', () => {
  it('show the same series and values as a plain counter, read after read, whichever way increments came in', async () => {
    const { plain, folded, plainRegistry, foldedRegistry } = pair(['model', 'billing']);
    expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
    const kept = folded.child('a\u0000free', { model: 'a', billing: 'free' });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 500; i++) {
        const v = (i * 7919) % 1000;
        kept.inc(v);
        plain.inc({ model: 'a', billing: 'free' }, v);
        folded.inc({ model: 'b', billing: 'paid' });
        plain.inc({ model: 'b', billing: 'paid' });
        folded.labels('c', 'paid').inc(0.5);
        plain.labels('c', 'paid').inc(0.5);
      }
      // A series incremented by 0 only exists, as prom-client makes it.
      folded.child('z\u0000free', { model: 'z', billing: 'free' }).inc(0);
      plain.inc({ model: 'z', billing: 'free' }, 0);
      expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
      expect(await foldedRegistry.getMetricsAsJSON()).to.deep.equal(await plainRegistry.getMetricsAsJSON());
    }
  });

  it('counts a counter without labels as prom-client does, and refuses what it refuses', async () => {
    const { plain, folded, plainRegistry, foldedRegistry } = pair([]);
    expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
    folded.inc();
    plain.inc();
    folded.inc(4);
    plain.inc(4);
    expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
    expect(() => folded.inc(-1)).to.throw('It is not possible to decrease a counter');
    expect(() => folded.child('k', { nope: 'x' })).to.throw();
    const labelled = pair(['state']).folded;
    expect(() => labelled.child('k', { state: 'ok' }).inc(Number.POSITIVE_INFINITY)).to.throw(TypeError);
  });

  it('shows nothing for a label set made but never incremented, as prom-client does', async () => {
    const { plain, folded, plainRegistry, foldedRegistry } = pair(['state']);
    folded.child('s', { state: 's' });
    plain.labels({ state: 's' });
    expect(await foldedRegistry.metrics()).to.equal(await plainRegistry.metrics());
  });
});
