/**
 * The gateway sets V8's heap growth at start (src/heap.ts) unless the operator chose it: an operator's own
 * --heap-growing-percent, on the command line or in NODE_OPTIONS, is left as it is. The same for the young
 * generation's size the supervisor gives each worker it forks. PORTCULLIS_MALLOC_TRIM_SECONDS is read before
 * anything starts: unset is the default period, 0 is off, anything but a whole number is a configuration error.
 */
import { expect } from 'chai';
import { ConfigError } from '../src/config/documents.js';
import { DEFAULT_TRIM_SECONDS, setHeapGrowth, trimSeconds, workerExecArgv } from '../src/heap.js';

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

describe('the malloc trim period', () => {
  it("is the default when unset or empty, and the operator's whole number of seconds otherwise (0: off)", () => {
    expect(trimSeconds({})).to.equal(DEFAULT_TRIM_SECONDS);
    expect(trimSeconds({ PORTCULLIS_MALLOC_TRIM_SECONDS: '' })).to.equal(DEFAULT_TRIM_SECONDS);
    expect(trimSeconds({ PORTCULLIS_MALLOC_TRIM_SECONDS: '0' })).to.equal(0);
    expect(trimSeconds({ PORTCULLIS_MALLOC_TRIM_SECONDS: '30' })).to.equal(30);
  });

  it('refuses anything but a whole number of seconds', () => {
    for (const bad of ['10s', '-1', '1.5', ' 5', 'off']) {
      expect(() => trimSeconds({ PORTCULLIS_MALLOC_TRIM_SECONDS: bad }), bad).to.throw(ConfigError, 'PORTCULLIS_MALLOC_TRIM_SECONDS');
    }
  });
});
