/**
 * Receipt signatures: Ed25519 over the RFC 8785 canonical JSON of the receipt without `signature`, so key
 * order and whitespace never matter and any changed field does; the key from PORTCULLIS_RECEIPT_KEY, a key
 * file, or an ephemeral one with a warning.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createReceiptSigner,
  ephemeralReceiptSigner,
  loadReceiptSigner,
  publicKeyFromPem,
  signedPayload,
  verifyReceipt,
} from '../../src/receipts/signing.js';
import type { Logger } from '../../src/log.js';

const receipt = { id: 'rcpt_1', principalId: 'did:web:x:tenant:a', createdAt: '2030-01-01T00:00:00.000Z', chargedMicroUSD: 54, usage: { prompt_tokens: 1, cached_tokens: 0 } };

function recordingLog(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, error() {}, warn: (event: string) => void warnings.push(event) };
}

describe('receipt signing', () => {
  it('signs the canonical JSON: sorted keys, no whitespace, signature excluded', () => {
    expect(signedPayload({ b: 1, a: { d: 'x', c: [2, 1] }, signature: { value: 'ignored' } }).toString()).to.equal('{"a":{"c":[2,1],"d":"x"},"b":1}');
  });

  it('verifies a signed receipt whatever its key order, and refuses a changed field or another key', () => {
    const signer = ephemeralReceiptSigner();
    const signed = signer.sign(receipt);
    const pub = publicKeyFromPem(signer.publicKeyPem);
    expect(verifyReceipt(signed, pub)).to.deep.equal({ ok: true, keyId: signer.keyId });
    const reordered = Object.fromEntries(Object.entries(signed).reverse());
    expect(verifyReceipt(JSON.parse(JSON.stringify(reordered, null, 2)), pub).ok).to.equal(true);
    expect(verifyReceipt({ ...signed, chargedMicroUSD: 0 }, pub)).to.deep.equal({ ok: false, reason: 'the signature does not match the receipt' });
    const other = publicKeyFromPem(ephemeralReceiptSigner().publicKeyPem);
    expect(verifyReceipt(signed, other).ok).to.equal(false);
    expect(verifyReceipt({ ...signed, signature: undefined }, pub).ok).to.equal(false);
  });

  it('takes the key from PORTCULLIS_RECEIPT_KEY, then receipts.keyFile, else an ephemeral one with a warning', () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const expected = createReceiptSigner(privateKey).keyId;
    const log = recordingLog();
    expect(loadReceiptSigner({ root: '/', env: { PORTCULLIS_RECEIPT_KEY: pem }, log }).keyId).to.equal(expected);
    const root = mkdtempSync(join(tmpdir(), 'portcullis-key-'));
    writeFileSync(join(root, 'k.pem'), pem);
    const fromFile = loadReceiptSigner({ root, keyFile: 'k.pem', env: {}, log });
    expect(fromFile).to.include({ keyId: expected, ephemeral: false });
    expect(log.warnings).to.deep.equal([]);
    const ephemeral = loadReceiptSigner({ root, env: {}, log });
    expect(ephemeral.ephemeral).to.equal(true);
    expect(log.warnings).to.deep.equal(['receipts.key.ephemeral']);
  });

  it('refuses a key that is not Ed25519', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => createReceiptSigner(privateKey)).to.throw(/Ed25519/);
  });
});
