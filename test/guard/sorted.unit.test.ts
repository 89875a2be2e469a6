import { expect } from 'chai';
import { lastAtOrBefore } from '../../src/guard/sorted.js';

// The joined view, the boundary pass, the split-secret join and the echoes all map a position back through
// this one search; a wrong answer would put a mask on the wrong text.
describe('lastAtOrBefore', () => {
  const byScan = (xs: number[], x: number): number => {
    let k = -1;
    xs.forEach((v, i) => {
      if (v <= x) k = i;
    });
    return k;
  };

  it('answers -1 for an empty array and for a value before the first entry', () => {
    expect(lastAtOrBefore([], 5)).to.equal(-1);
    expect(lastAtOrBefore([3, 7], 2)).to.equal(-1);
  });

  it('answers the last of equal entries, as a scan from the start would', () => {
    expect(lastAtOrBefore([0, 4, 4, 4, 9], 4)).to.equal(3);
    expect(lastAtOrBefore([0, 4, 4, 4, 9], 8)).to.equal(3);
    expect(lastAtOrBefore([0, 4, 4, 4, 9], 100)).to.equal(4);
  });

  it('agrees with a scan on seeded random ascending arrays', () => {
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % 50;
    for (let round = 0; round < 300; round++) {
      const xs = Array.from({ length: next() }, () => next()).sort((a, b) => a - b);
      for (let x = -1; x <= 51; x++) expect(lastAtOrBefore(xs, x), `[${xs.join(', ')}] at ${x}`).to.equal(byScan(xs, x));
    }
  });
});
