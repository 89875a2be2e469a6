/**
 * Reading witness keys and cosignatures (src/receipts/witness/cosignature.ts) without a witness: the C2SP
 * tlog-cosignature construction made here with node:crypto, as the spec writes it, and every way a line
 * or a key can be wrong. test/receipts/witness.test.ts checks the same code against the Go witness.
 */
import { expect } from 'chai';
import { generateKeyPairSync, sign } from 'node:crypto';
import { signCheckpoint } from '../../src/receipts/note.js';
import { checkCosignatureLine, countCosignatures, parseWitnessKey, requireCosignatures, witnessVerifierKey } from '../../src/receipts/witness/cosignature.js';

const log = generateKeyPairSync('ed25519');
const note = signCheckpoint({ origin: 'log.portcullis.test', size: 7, root: Buffer.alloc(32, 9) }, log.privateKey);
const text = note.slice(0, note.lastIndexOf('\n\n') + 1);

function witness(name: string) {
  const k = generateKeyPairSync('ed25519');
  const key = parseWitnessKey(witnessVerifierKey(name, k.publicKey));
  /** A cosignature line as the spec builds it: key id || 8-byte time || Ed25519 over "cosignature/v1\ntime T\n" + text. */
  const line = (time: number, over = text) => {
    const t = Buffer.alloc(8);
    t.writeBigUInt64BE(BigInt(time));
    const sig = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${over}`), k.privateKey);
    return `— ${name} ${Buffer.concat([key.id, t, sig]).toString('base64')}`;
  };
  return { key, line };
}

describe('witness cosignatures (C2SP tlog-cosignature)', () => {
  it('verifies a cosignature line and reads its time', () => {
    const w = witness('w1.portcullis.test');
    expect(checkCosignatureLine(text, w.line(1700000000), w.key)).to.equal(1700000000);
  });

  it('refuses a line over another checkpoint, with its time changed, or by another key of the same name', () => {
    const w = witness('w1.portcullis.test');
    const other = witness('w1.portcullis.test');
    expect(checkCosignatureLine(text, w.line(1, text.replace('\n7\n', '\n8\n')), w.key)).to.equal(null);
    const blob = Buffer.from(w.line(5).split(' ')[2]!, 'base64');
    blob.writeBigUInt64BE(6n, 4);
    expect(checkCosignatureLine(text, `— w1.portcullis.test ${blob.toString('base64')}`, w.key)).to.equal(null);
    expect(checkCosignatureLine(text, other.line(5), w.key)).to.equal(null);
  });

  it('counts k of n on a signed note, and says which witnesses are missing', () => {
    const [a, b, c] = [witness('a.test'), witness('b.test'), witness('c.test')];
    const cosigned = `${note}${a.line(10)}\n${c.line(11)}\n`;
    expect(countCosignatures(cosigned, [a.key, b.key, c.key])).to.deep.equal({
      cosigned: [
        { name: 'a.test', time: 10 },
        { name: 'c.test', time: 11 },
      ],
      missing: ['b.test'],
    });
    expect(requireCosignatures(cosigned, [a.key, b.key, c.key], 2).ok).to.equal(true);
    const three = requireCosignatures(cosigned, [a.key, b.key, c.key], 3);
    expect(three.ok).to.equal(false);
    expect(three.ok ? '' : three.reason).to.contain('carries 2 of the 3 witness cosignatures required (not cosigned by: b.test)');
    // The log's own signature line is no cosignature.
    expect(requireCosignatures(note, [a.key], 1).ok).to.equal(false);
  });

  it('reads only cosignature/v1 Ed25519 verifier keys whose id matches', () => {
    const k = generateKeyPairSync('ed25519').publicKey;
    const vkey = witnessVerifierKey('w.test', k);
    expect(parseWitnessKey(vkey).name).to.equal('w.test');
    // The base64 key may hold '+' itself: only the first two split.
    const [, name, id, key] = /^([^+]+)\+([^+]+)\+(.+)$/.exec(vkey) as unknown as [string, string, string, string];
    const raw = Buffer.from(key, 'base64');
    raw[0] = 0x01; // a log's (signed-note) key, not a cosigner's
    expect(() => parseWitnessKey(`${name}+${id}+${raw.toString('base64')}`)).to.throw(/not a cosignature\/v1 Ed25519 key/);
    expect(() => parseWitnessKey(`${name}+00000000+${key}`)).to.throw(/key id does not match/);
    expect(() => parseWitnessKey('w.test')).to.throw(/not a witness verifier key/);
    expect(() => parseWitnessKey(`w test+${id}+${key}`)).to.throw(/not a witness verifier key/);
  });
});
