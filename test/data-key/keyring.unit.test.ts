/**
 * The data keyring: AES-256-GCM seals that open only under their own key and their own record, and keyrings
 * that refuse to be half-configured.
 */
import { expect } from 'chai';
import { newDataKey, parseKeyring, DataKeyError } from '../../src/data-key/keyring.js';

describe('data keyring', () => {
  const k1 = newDataKey();
  const k2 = newDataKey();

  it('seals so that only the same key and the same record open it, with a fresh nonce each time', () => {
    const ring = parseKeyring(`one:${k1}`);
    const a = ring.seal('JBSWY3DPEHPK3PXP', 'totp:alice');
    expect(a).to.match(/^pcl-sealed:v1:one:[A-Za-z0-9_-]+$/);
    expect(a).to.not.include('JBSWY3DPEHPK3PXP');
    expect(ring.seal('JBSWY3DPEHPK3PXP', 'totp:alice')).to.not.equal(a);
    expect(ring.open(a, 'totp:alice')).to.equal('JBSWY3DPEHPK3PXP');
    expect(() => ring.open(a, 'totp:mallory')).to.throw(DataKeyError, /moved from another record/);
    expect(() => parseKeyring(`one:${k2}`).open(a, 'totp:alice')).to.throw(DataKeyError);
    expect(() => parseKeyring(`two:${k2}`).open(a, 'totp:alice')).to.throw(DataKeyError, /does not hold/);
    const flipped = a.slice(0, -3) + (a.at(-3) === 'A' ? 'B' : 'A') + a.slice(-2);
    expect(() => ring.open(flipped, 'totp:alice')).to.throw(DataKeyError);
  });

  it('rolls keys: a new key first seals, the old one after it still opens, and needsRewrap tells which', () => {
    const old = parseKeyring(`old:${k1}`);
    const sealedOld = old.seal('s', 'r');
    const both = parseKeyring(`new:${k2},old:${k1}`);
    expect(both.currentId).to.equal('new');
    expect(both.open(sealedOld, 'r')).to.equal('s');
    expect(both.needsRewrap(sealedOld)).to.equal(true);
    expect(both.needsRewrap(both.seal('s', 'r'))).to.equal(false);
    expect(both.needsRewrap('JBSWY3DPEHPK3PXP')).to.equal(true);
    expect(both.isSealed('JBSWY3DPEHPK3PXP')).to.equal(false);
  });

  it('a bare key gets an id derived from it; malformed keyrings are refused with what is wrong', () => {
    expect(parseKeyring(k1).currentId).to.match(/^[0-9a-f]{8}$/);
    expect(parseKeyring(k1).currentId).to.equal(parseKeyring(k1).currentId);
    expect(() => parseKeyring('')).to.throw(DataKeyError, /empty/);
    expect(() => parseKeyring('a:c2hvcnQ=')).to.throw(DataKeyError, /32 bytes/);
    expect(() => parseKeyring(`a:${k1},a:${k2}`)).to.throw(DataKeyError, /twice/);
    expect(() => parseKeyring(`bad id!:${k1}`)).to.throw(DataKeyError, /key id/);
  });
});

describe('data key at start', () => {
  it('a malformed or unreadable key is a clean configuration error naming the variable, never the key', async () => {
    const { loadDataKeyring } = await import('../../src/data-key/load.js');
    const { ConfigError } = await import('../../src/config/documents.js');
    const { silentLogger } = await import('../../src/log.js');
    const bad = (env: Record<string, string>) => {
      try {
        loadDataKeyring({ env, log: silentLogger });
      } catch (err) {
        return err;
      }
      return null;
    };
    const short = bad({ PORTCULLIS_DATA_KEY: 'k1:c2hvcnQ=' }) as Error;
    expect(short).to.be.instanceOf(ConfigError);
    expect(short.message).to.match(/PORTCULLIS_DATA_KEY, key 1: a data key is 32 bytes/);
    expect(short.message).to.not.include('c2hvcnQ');
    const missing = bad({ PORTCULLIS_DATA_KEY_FILE: '/nonexistent/data.key' }) as Error;
    expect(missing).to.be.instanceOf(ConfigError);
    expect(missing.message).to.include('ENOENT');
  });
});
