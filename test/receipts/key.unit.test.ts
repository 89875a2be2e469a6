/**
 * The receipt log's key: from PORTCULLIS_RECEIPT_KEY, a key file, or an ephemeral one with a warning; only
 * Ed25519. Its public half opens the checkpoints it signs, in any of the forms it is published in.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadReceiptKey, publicKeyFromPem, receiptKey } from '../../src/receipts/key.js';
import { openCheckpoint, parseVerifierKey, signCheckpoint, verifierKey } from '../../src/receipts/note.js';
import { EMPTY_ROOT } from '../../src/receipts/merkle.js';
import type { Logger } from '../../src/log.js';

function recordingLog(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (event: string) => void warnings.push(event) };
}

describe('receipt log key', () => {
  it('takes the key from PORTCULLIS_RECEIPT_KEY, then receipts.keyFile, else an ephemeral one with a warning', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const expected = receiptKey(privateKey).keyId;
    const log = recordingLog();
    expect(loadReceiptKey({ root: '/', env: { PORTCULLIS_RECEIPT_KEY: pem }, log }).keyId).to.equal(expected);
    const root = mkdtempSync(join(tmpdir(), 'portcullis-key-'));
    writeFileSync(join(root, 'k.pem'), pem);
    const fromFile = loadReceiptKey({ root, keyFile: 'k.pem', env: {}, log });
    expect(fromFile).to.include({ keyId: expected, ephemeral: false });
    expect(log.warnings).to.deep.equal([]);
    const ephemeral = loadReceiptKey({ root, env: {}, log });
    expect(ephemeral.ephemeral).to.equal(true);
    expect(log.warnings).to.deep.equal(['receipts.key.ephemeral']);
  });

  it('takes a PEM written on one line with \\n for its line breaks, as an env file holds it', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const oneLine = pem.replace(/\n/g, '\\n');
    expect(oneLine).to.not.include('\n');
    const key = loadReceiptKey({ root: '/', env: { PORTCULLIS_RECEIPT_KEY: oneLine }, log: recordingLog() });
    expect(key).to.include({ keyId: receiptKey(privateKey).keyId, ephemeral: false });
  });

  it('refuses a key that is not Ed25519', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => receiptKey(privateKey)).to.throw(/Ed25519/);
  });

  it('opens its checkpoints from the PEM of either half and from its verifier key', () => {
    const key = receiptKey(generateKeyPairSync('ed25519').privateKey);
    const note = signCheckpoint({ origin: 'a.example/log', size: 0, root: EMPTY_ROOT }, key.privateKey);
    const fromPublic = publicKeyFromPem(key.publicKeyPem);
    const fromPrivate = publicKeyFromPem(key.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const fromVkey = parseVerifierKey(verifierKey('a.example/log', key.publicKey)).publicKey;
    for (const k of [fromPublic, fromPrivate, fromVkey]) expect(openCheckpoint(note, k).ok).to.equal(true);
  });
});
