/**
 * The gateway sets V8's heap growth at start (src/heap.ts) unless the operator chose it: an operator's own
 * --heap-growing-percent, on the command line or in NODE_OPTIONS, is left as it is. The same for the young
 * generation's size the supervisor gives each worker it forks.
 */
import { expect } from 'chai';
import { setHeapGrowth, workerExecArgv } from '../src/heap.js';

describe('heap growth at start', () => {
  it("leaves an operator's --heap-growing-percent alone, from the command line or NODE_OPTIONS", () => {
    expect(setHeapGrowth(['--heap-growing-percent=80'], '')).to.equal(false);
    expect(setHeapGrowth([], '--max-old-space-size=512 --heap_growing_percent=30')).to.equal(false);
  });

  it('sets it otherwise', () => {
    expect(setHeapGrowth(['--enable-source-maps'], '--max-old-space-size=512')).to.equal(true);
  });
});

describe("the young generation's size for a worker", () => {
  it("adds the gateway's size to the node flags a worker inherits", () => {
    expect(workerExecArgv(['--import', 'tsx'], '')).to.deep.equal(['--import', 'tsx', '--max-semi-space-size=32']);
  });

  it("leaves an operator's own size alone, from the command line or NODE_OPTIONS", () => {
    expect(workerExecArgv(['--max-semi-space-size=16'], '')).to.deep.equal(['--max-semi-space-size=16']);
    expect(workerExecArgv([], '--enable-source-maps --max_semi_space_size=64')).to.deep.equal([]);
  });
});
