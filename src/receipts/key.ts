/**
 * The receipt log's key: one Ed25519 key per deployment, which signs the log's checkpoints (note.ts) —
 * not each receipt. Every gateway of a deployment must hold the same key, since whichever of them holds
 * the signing lease signs the next checkpoint.
 *
 * Where it comes from, read at start like the listeners and the store: `PORTCULLIS_RECEIPT_KEY` (a PKCS#8
 * PEM private key), else `PORTCULLIS_RECEIPT_KEY_FILE` (a path to one; `npm start` keeps one in its data
 * folder, src/local-data), else `receipts.keyFile` in config/gateway.yaml (a path relative to the
 * configuration root). With neither, a key is generated for this process and a warning logged: its
 * checkpoints then verify only against that process's public key.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import type { Logger } from '../log.js';

export interface ReceiptKey {
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** First 16 hex digits of the SHA-256 of the public key (SPKI DER): a short name for logs and docs. */
  readonly keyId: string;
  /** SPKI PEM of the public key: what GET /v1/secure publishes and `portcullis receipt verify` takes. */
  readonly publicKeyPem: string;
  /** True when no key was configured and this one was generated at start-up. */
  readonly ephemeral: boolean;
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

export function receiptKey(privateKey: KeyObject, ephemeral = false): ReceiptKey {
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the receipt key must be an Ed25519 private key, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, keyId: keyIdOf(publicKey), publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), ephemeral };
}

export function ephemeralReceiptKey(): ReceiptKey {
  return receiptKey(generateKeyPairSync('ed25519').privateKey, true);
}

/**
 * An env file (compose's env_file, systemd's EnvironmentFile, podman's --env-file) holds one line per
 * variable, so a PEM given there has its line breaks written `\n`: turn them back into line breaks.
 */
function oneLinePem(pem: string): string {
  return pem.includes('\n') ? pem : pem.replace(/\\n/g, '\n');
}

/** Where the key comes from: the environment, then config, else an ephemeral key (with a warning). */
export function loadReceiptKey(opts: { root: string; keyFile?: string | undefined; env: Record<string, string | undefined>; log: Logger }): ReceiptKey {
  const pem = opts.env['PORTCULLIS_RECEIPT_KEY'];
  if (pem) return receiptKey(createPrivateKey(oneLinePem(pem)));
  const file = opts.env['PORTCULLIS_RECEIPT_KEY_FILE'];
  if (file) return receiptKey(createPrivateKey(readFileSync(file)));
  if (opts.keyFile) {
    const path = isAbsolute(opts.keyFile) ? opts.keyFile : join(opts.root, opts.keyFile);
    return receiptKey(createPrivateKey(readFileSync(path)));
  }
  const key = ephemeralReceiptKey();
  opts.log.warn('receipts.key.ephemeral', {
    keyId: key.keyId,
    note: 'no receipt key configured (PORTCULLIS_RECEIPT_KEY or receipts.keyFile): checkpoints are signed with a key generated for this process only',
  });
  return key;
}

/** A public key from a PEM that holds either the public key or the private key. */
export function publicKeyFromPem(pem: string | Buffer): KeyObject {
  const text = pem.toString();
  return /PRIVATE KEY/.test(text) ? createPublicKey(createPrivateKey(text)) : createPublicKey(text);
}
