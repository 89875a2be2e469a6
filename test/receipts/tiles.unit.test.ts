/**
 * C2SP tlog-tiles paths: `<L>/<N>[.p/<W>]`, N in groups of three digits prefixed `x`, only the canonical
 * spelling accepted (as Go's tlog.ParseTilePath does); a tile exists only once the tree holds all its hashes.
 */
import { expect } from 'chai';
import { parseTilePath, tileIndexPath, tileNodes, tilePath } from '../../src/receipts/tiles.js';

describe('receipt log: hash tile paths (C2SP tlog-tiles)', () => {
  it('writes and reads the index in groups of three digits', () => {
    expect(tileIndexPath(0)).to.equal('000');
    expect(tileIndexPath(1234067)).to.equal('x001/x234/067');
    expect(tilePath({ level: 0, index: 1234067, width: 256 })).to.equal('0/x001/x234/067');
    expect(tilePath({ level: 2, index: 5, width: 17 })).to.equal('2/005.p/17');
    expect(parseTilePath('0/x001/x234/067')).to.deep.equal({ level: 0, index: 1234067, width: 256 });
    expect(parseTilePath('1/000.p/11')).to.deep.equal({ level: 1, index: 0, width: 11 });
  });

  it('refuses every other spelling', () => {
    for (const bad of [
      '',
      '0',
      '0/0',
      '0/1',
      '00/000',
      '0/x000/001',
      '0/000.p/0',
      '0/000.p/256',
      '0/000.p/01',
      '64/000',
      '0/000/',
      '0/abc',
      '-1/000',
      '0/x1/000',
      '0/000.p',
    ]) {
      expect(parseTilePath(bad), bad).to.equal(null);
    }
  });

  it('exists only once the tree holds all its hashes', () => {
    expect(tileNodes({ level: 0, index: 0, width: 256 }, 255)).to.equal(null);
    expect(tileNodes({ level: 0, index: 0, width: 256 }, 256)).to.have.length(256);
    expect(tileNodes({ level: 0, index: 0, width: 255 }, 255)![254]).to.deep.equal({ level: 0, index: 254 });
    expect(tileNodes({ level: 1, index: 0, width: 1 }, 255)).to.equal(null);
    expect(tileNodes({ level: 1, index: 0, width: 1 }, 256)).to.deep.equal([{ level: 8, index: 0 }]);
  });
});
