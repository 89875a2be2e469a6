/**
 * Receipt signatures: Ed25519 (node:crypto) over the receipt's canonical JSON, so anyone holding the
 * gateway's public key can check a receipt offline and no field can be changed unnoticed.
 *
 * Canonical form: RFC 8785 (JSON Canonicalization Scheme, the `canonicalize` package) of the receipt
 * without its `signature` member — object keys sorted by UTF-16 code units, no whitespace, strings escaped
 * as JSON.stringify does, numbers in their shortest ECMAScript form (receipts hold integers only).
 * The signature travels in the receipt: `signature: {alg: "Ed25519", keyId, value}`, `value` being the
 * base64url signature and `keyId` the first 16 hex digits of the SHA-256 of the public key (SPKI DER).
 *
 * The key: `PORTCULLIS_RECEIPT_KEY` (a PKCS#8 PEM private key) or `receipts.keyFile` in config/gateway.yaml
 * (a path to one, relative to the configuration root). With neither, an ephemeral key is generated at
 * start-up and a warning logged: receipts then verify only against that process's public key.
 * The key is read at start, like the listeners and the store.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import canonicalize from 'canonicalize';
import type { Receipt } from '../store/store.js';
import type { Logger } from '../log.js';

export interface ReceiptSignature {
  alg: 'Ed25519';
  keyId: string;
  value: string;
}

export interface ReceiptSigner {
  readonly keyId: string;
  /** SPKI PEM of the public key: what GET /v1/secure publishes and `portcullis receipt verify` takes. */
  readonly publicKeyPem: string;
  /** True when no key was configured and this one was generated at start-up. */
  readonly ephemeral: boolean;
  /** The receipt with its signature (any previous one replaced). */
  sign(receipt: Receipt): Receipt;
}

/** The bytes that are signed: the RFC 8785 canonical JSON of the receipt without `signature`. */
export function signedPayload(receipt: Record<string, unknown>): Buffer {
  const { signature: _signature, ...rest } = receipt;
  const text = canonicalize(rest);
  if (text === undefined) throw new TypeError('receipt cannot be canonicalized');
  return Buffer.from(text, 'utf8');
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

export function createReceiptSigner(privateKey: KeyObject, ephemeral = false): ReceiptSigner {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the receipt key must be an Ed25519 private key, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  const keyId = keyIdOf(publicKey);
  return {
    keyId,
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    ephemeral,
    sign(receipt) {
      // Through JSON first, so what is signed is exactly what is stored and read back.
      const plain = JSON.parse(JSON.stringify(receipt)) as Receipt;
      const value = sign(null, signedPayload(plain), privateKey).toString('base64url');
      const signature: ReceiptSignature = { alg: 'Ed25519', keyId, value };
      return { ...plain, signature };
    },
  };
}

export function ephemeralReceiptSigner(): ReceiptSigner {
  return createReceiptSigner(generateKeyPairSync('ed25519').privateKey, true);
}

/** Where the key comes from: the environment, then config, else an ephemeral key (with a warning). */
export function loadReceiptSigner(opts: {
  root: string;
  keyFile?: string | undefined;
  env: Record<string, string | undefined>;
  log: Logger;
}): ReceiptSigner {
  const pem = opts.env['PORTCULLIS_RECEIPT_KEY'];
  if (pem) return createReceiptSigner(createPrivateKey(pem));
  if (opts.keyFile) {
    const path = isAbsolute(opts.keyFile) ? opts.keyFile : join(opts.root, opts.keyFile);
    return createReceiptSigner(createPrivateKey(readFileSync(path)));
  }
  const signer = ephemeralReceiptSigner();
  opts.log.warn('receipts.key.ephemeral', {
    keyId: signer.keyId,
    note: 'no receipt key configured (PORTCULLIS_RECEIPT_KEY or receipts.keyFile): receipts are signed with a key generated for this process only',
  });
  return signer;
}

/** A public key from a PEM that holds either the public key or the private key. */
export function publicKeyFromPem(pem: string | Buffer): KeyObject {
  const text = pem.toString();
  return /PRIVATE KEY/.test(text) ? createPublicKey(createPrivateKey(text)) : createPublicKey(text);
}

export type Verification = { ok: true; keyId: string } | { ok: false; reason: string };

/** Checks a receipt's signature against a public key. */
export function verifyReceipt(receipt: unknown, publicKey: KeyObject): Verification {
  if (!receipt || typeof receipt !== 'object' || Array.isArray(receipt)) return { ok: false, reason: 'not a receipt object' };
  const sig = (receipt as { signature?: Partial<ReceiptSignature> }).signature;
  if (!sig || sig.alg !== 'Ed25519' || typeof sig.value !== 'string') return { ok: false, reason: 'no Ed25519 signature on the receipt' };
  const keyId = keyIdOf(publicKey);
  if (sig.keyId !== keyId) return { ok: false, reason: `signed by key ${String(sig.keyId)}, not by the given key ${keyId}` };
  const good = verify(null, signedPayload(receipt as Record<string, unknown>), publicKey, Buffer.from(sig.value, 'base64url'));
  return good ? { ok: true, keyId } : { ok: false, reason: 'the signature does not match the receipt' };
}

/**
 * The public half, as GET /v1/secure publishes it: `receiptPublicKey(deps.meter)` (the meter holds the
 * signer of this gateway).
 */
export function receiptPublicKey(holder: { signer: ReceiptSigner }): { alg: 'Ed25519'; keyId: string; publicKeyPem: string } {
  return { alg: 'Ed25519', keyId: holder.signer.keyId, publicKeyPem: holder.signer.publicKeyPem };
}
