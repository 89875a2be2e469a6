/**
 * Receipts written before the log (each one signed on its own: `signature: {alg: "Ed25519", keyId, value}`,
 * the base64url Ed25519 signature over the RFC 8785 form of the receipt without `signature`). Such receipts
 * stay in the store as they were and are not leaves of the log; `portcullis receipt verify` still checks
 * them this way, so a reviewer holding one needs nothing else. No new receipt is signed like this.
 */
import { verify, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../canonical-json.js';
import { keyIdOf } from './key.js';

export type LegacyVerification = { ok: true; keyId: string } | { ok: false; reason: string };

/** Whether a receipt is of the pre-log kind: signed on its own, and never sequenced in the log. */
export function isLegacyReceipt(receipt: Record<string, unknown>): boolean {
  return typeof receipt['signature'] === 'object' && receipt['signature'] !== null && receipt['logIndex'] === undefined;
}

export function verifyLegacyReceipt(receipt: Record<string, unknown>, publicKey: KeyObject): LegacyVerification {
  const sig = receipt['signature'] as { alg?: unknown; keyId?: unknown; value?: unknown } | undefined;
  if (!sig || sig.alg !== 'Ed25519' || typeof sig.value !== 'string') return { ok: false, reason: 'no Ed25519 signature on the receipt' };
  const keyId = keyIdOf(publicKey);
  if (sig.keyId !== keyId) return { ok: false, reason: `signed by key ${String(sig.keyId)}, not by the given key ${keyId}` };
  const { signature: _signature, ...rest } = receipt;
  let text: string;
  try {
    text = canonicalJson(rest);
  } catch {
    return { ok: false, reason: 'the receipt cannot be canonicalized' };
  }
  const good = verify(null, Buffer.from(text, 'utf8'), publicKey, Buffer.from(sig.value, 'base64url'));
  return good ? { ok: true, keyId } : { ok: false, reason: 'the signature does not match the receipt' };
}
