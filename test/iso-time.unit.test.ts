/**
 * The ISO time text (src/iso-time.ts) is the text `toISOString` gives, for the millisecond it keeps and for
 * every other: across years, around the epoch, times asked out of order and again, and the same refusal of a
 * time that is not one.
 */
import { expect } from 'chai';
import { isoNow, isoTime } from '../src/iso-time.js';

describe('isoTime', () => {
  it('gives the text toISOString gives, whatever time was asked before', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const times = [0, -1, 1, 951_782_400_000, 4_102_444_800_000, -62_198_755_200_000, 8.64e15, -8.64e15];
    for (let i = 0; i < 5_000; i++) times.push(Math.floor((next() - 0.5) * 2 * 4e12));
    for (let i = 0; i < 1_000; i++) times.push(times[Math.floor(next() * times.length)]!, 1_764_374_400_000 + Math.floor(next() * 3));
    for (const ms of times) expect(isoTime(ms)).to.equal(new Date(ms).toISOString());
    // A fraction of a millisecond names the same millisecond, as Date reads it.
    expect(isoTime(1_764_374_400_000.7)).to.equal(new Date(1_764_374_400_000.7).toISOString());
    expect(isoTime(1_764_374_400_000)).to.equal(new Date(1_764_374_400_000).toISOString());
  });

  it('refuses what is not a time as toISOString does, also right after a time it gave', () => {
    isoTime(0);
    for (const ms of [Number.NaN, 8.64e15 + 1, Infinity]) expect(() => isoTime(ms)).to.throw(RangeError);
    expect(isoTime(0)).to.equal('1970-01-01T00:00:00.000Z');
  });

  it('gives the current time', () => {
    const before = Date.now();
    const now = Date.parse(isoNow());
    expect(now).to.be.within(before, Date.now());
  });
});
