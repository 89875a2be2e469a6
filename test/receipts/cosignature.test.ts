/**
 * Reading witness keys and cosignatures (src/receipts/witness/cosignature.ts) without a witness: the C2SP
 * tlog-cosignature construction made here with node:crypto, as the spec writes it, and every way a line
 * or a key can be wrong. test/receipts/witness.test.ts checks the same code against the Go witness.
 */
import { expect } from 'chai';
import { generateKeyPairSync, sign } from 'node:crypto';
import { openCheckpoint, signCheckpoint } from '../../src/receipts/note.js';
import { checkCosignatureLine, countCosignatures, parseWitnessKey, requireCosignatures, witnessVerifierKey } from '../../src/receipts/witness/cosignature.js';
import { cli } from '../helpers/cli.js';

const log = generateKeyPairSync('ed25519');
const note = signCheckpoint({ origin: 'log.portcullis.test', size: 7, root: Buffer.alloc(32, 9) }, log.privateKey);
const text = note.slice(0, note.lastIndexOf('\n\n') + 1);

function witness(name: string) {
  const k = generateKeyPairSync('ed25519');
  const key = parseWitnessKey(witnessVerifierKey(name, k.publicKey));
  /** A cosignature line as the spec builds it: key id || 8-byte time || Ed25519 over "cosignature/v1\ntime T\n" + text. */
  const line = (time: number | bigint, over = text) => {
    const t = Buffer.alloc(8);
    t.writeBigUInt64BE(BigInt(time));
    const sig = sign(null, Buffer.from(`cosignature/v1\ntime ${time}\n${over}`), k.privateKey);
    return `— ${name} ${Buffer.concat([key.id, t, sig]).toString('base64')}`;
  };
  return { key, line, publicKey: k.publicKey };
}

/** The same bytes spelt with a padding bit set in the last character (RFC 4648 3.5: not canonical). */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const strayBits = (b64: string) => b64.replace(/(.)(=+)$/, (_, c: string, pad: string) => `${ALPHABET[ALPHABET.indexOf(c) ^ 1]}${pad}`);

/** The line with its base64 signature replaced by `edit(base64)`. */
const reencode = (line: string, edit: (b64: string) => string) => {
  const [dash, name, b64] = line.split(' ') as [string, string, string];
  return `${dash} ${name} ${edit(b64)}`;
};

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
      invalid: [],
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

  it('refuses a cosignature whose time is above 2^63 - 1, as tlog-cosignature requires', () => {
    const w = witness('w1.portcullis.test');
    expect(checkCosignatureLine(text, w.line(2n ** 63n - 1n), w.key)).to.be.a('number');
    expect(checkCosignatureLine(text, w.line(2n ** 63n), w.key)).to.equal(null);
    const r = requireCosignatures(`${note}${w.line(2n ** 64n - 1n)}\n`, [w.key], 1);
    expect(r.ok ? '' : r.reason).to.contain('witness w1.portcullis.test that is not valid (its time is above 2^63 - 1)');
  });

  it('reads signatures only as strict standard base64, the witness lines and the log line alike', () => {
    const w = witness('w1.portcullis.test');
    const good = w.line(1700000000);
    const spoilt = [
      reencode(good, (b) => `!!!!${b}`), // garbage Buffer.from would skip
      reencode(good, (b) => b.replace(/=+$/, '')), // padding dropped
      reencode(good, strayBits), // stray bits in the last character
      reencode(good, (b) => b.replace(/\+|\//, '-')), // base64url is not the standard alphabet
    ];
    expect(checkCosignatureLine(text, good, w.key)).to.equal(1700000000);
    for (const line of spoilt) {
      expect(checkCosignatureLine(text, line, w.key), line).to.equal(null);
      const r = requireCosignatures(`${note}${line}\n`, [w.key], 1);
      expect(r.ok, line).to.equal(false);
      // The checkpoint itself is refused as malformed, as Go's note.Open refuses it.
      expect(openCheckpoint(`${note}${line}\n`, log.publicKey).ok, line).to.equal(false);
    }
    expect(openCheckpoint(`${note}${good}\n`, log.publicKey).ok).to.equal(true);
    // The log's own line: non-canonical base64 of the right signature is no signature.
    const logLine = note.trimEnd().split('\n').at(-1)!;
    const bent = reencode(logLine, strayBits);
    const opened = openCheckpoint(`${text}\n${bent}\n`, log.publicKey);
    expect(opened.ok).to.equal(false);
    expect(opened.ok ? '' : opened.reason).to.contain('a signature line is malformed');
  });

  it("refuses a checkpoint with a forged or damaged line in a trusted witness's name and key id, even when k are met", () => {
    const [a, b] = [witness('a.test'), witness('b.test')];
    const forged = Buffer.from(b.line(10).split(' ')[2]!, 'base64');
    forged[forged.length - 1]! ^= 1;
    const cosigned = `${note}${a.line(10)}\n— b.test ${forged.toString('base64')}\n`;
    const r = requireCosignatures(cosigned, [a.key, b.key], 1);
    expect(r.ok ? '' : r.reason).to.contain(
      'a cosignature line in the name and key id of witness b.test that is not valid (its signature does not verify): forged or damaged',
    );
    // Another key that merely shares the name (another key id) is ignored, as signed-note says of unknown keys.
    const stranger = witness('b.test');
    expect(requireCosignatures(`${note}${a.line(10)}\n${stranger.line(10)}\n`, [a.key, b.key], 1).ok).to.equal(true);
  });

  it('says what is wrong with a checkpoint that ends with a blank line', () => {
    const opened = openCheckpoint(`${note}\n`, log.publicKey);
    expect(opened.ok ? '' : opened.reason).to.contain('the checkpoint ends with a blank line');
    const w = witness('w.test');
    const r = requireCosignatures(`${note}${w.line(1)}\n\n`, [w.key], 1);
    expect(r.ok ? '' : r.reason).to.contain('the checkpoint ends with a blank line');
  });

  it('refuses, as a usage error, one key given under two names to receipt verify|audit --witness', async function () {
    this.timeout(30_000);
    const w = witness('witness-a.test');
    const alias = witnessVerifierKey('witness-b.test', w.publicKey);
    const r = await cli(['receipt', 'audit', '--from', 'a.txt', '--to', 'b.txt', '--witness', w.key.vkey, '--witness', alias, '--witnesses-required', '2']);
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('"witness-a.test" and "witness-b.test" are the same key under two names');
  });
});
