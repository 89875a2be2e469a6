/**
 * The gateway sets V8's heap growth at start (src/heap.ts) unless the operator chose it: an operator's own
 * --heap-growing-percent, on the command line or in NODE_OPTIONS, is left as it is.
 */
import { expect } from 'chai';
import { setHeapGrowth } from '../src/heap.js';

describe('heap growth at start', () => {
  it("leaves an operator's --heap-growing-percent alone, from the command line or NODE_OPTIONS", () => {
    expect(setHeapGrowth(['--heap-growing-percent=80'], '')).to.equal(false);
    expect(setHeapGrowth([], '--max-old-space-size=512 --heap_growing_percent=30')).to.equal(false);
  });

  it('sets it otherwise', () => {
    expect(setHeapGrowth(['--enable-source-maps'], '--max-old-space-size=512')).to.equal(true);
  });
});
