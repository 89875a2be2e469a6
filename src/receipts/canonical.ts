/**
 * A receipt's leaf in the log: the RFC 8785 (JSON Canonicalization Scheme, src/canonical-json.ts) form of
 * the receipt without its proof — the members the log adds around it (`logIndex`,
 * `inclusionProof`, `checkpoint`, `pending`) are left out, so the bytes are fixed before the receipt is
 * sequenced and anyone can recompute them from what GET /v1/receipts/{id} answers. Keys sorted by UTF-16
 * code units, no whitespace, numbers in their shortest ECMAScript form (receipts hold integers only).
 *
 * The leaf hash is RFC 6962's SHA-256(0x00 || canonical receipt): the one hash a call costs.
 */
import { canonicalJson } from '../canonical-json.js';
import { leafHash } from './merkle.js';

/** The members that prove a receipt rather than make it. */
export const PROOF_MEMBERS = ['logIndex', 'inclusionProof', 'checkpoint', 'pending'] as const;

function withoutProofs(receipt: Record<string, unknown>): Record<string, unknown> {
  // A receipt being stored holds none of them: no copy then.
  if (!PROOF_MEMBERS.some((m) => m in receipt)) return receipt;
  const rest: Record<string, unknown> = { ...receipt };
  for (const m of PROOF_MEMBERS) delete rest[m];
  return rest;
}

export function canonicalReceipt(receipt: Record<string, unknown>): Buffer {
  return Buffer.from(canonicalJson(withoutProofs(receipt)), 'utf8');
}

export function receiptLeafHash(receipt: Record<string, unknown>): Buffer {
  return leafHash(canonicalReceipt(receipt));
}

/** A lone UTF-16 surrogate: JSON can carry it, RFC 8785 cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * What the store writes for a receipt: its canonical form (the bytes its leaf hash is taken over, not a
 * second JSON of it), and that leaf hash. The receipt is serialised once: the stored bytes ARE the leaf's
 * bytes, and the log's `logIndex` is appended after them (lua/receipt.lib.lua), so what GET
 * /v1/receipts/{id} answers starts with exactly the bytes that were hashed, the proof members after them.
 * A string RFC 8785 refuses (a lone surrogate, e.g. in a model name an upstream echoed) is stored with
 * U+FFFD in its place rather than failing the settlement; NaN or Infinity (never in a receipt the gateway
 * builds) is stored as JSON writes it, null. The common case pays nothing for either check.
 */
export function storableReceipt(receipt: Record<string, unknown>): { json: string; leaf: Buffer } {
  let json: string;
  try {
    // RFC 8785 of the object is RFC 8785 of what its JSON reads back as for plain values (both drop undefined
    // members, call toJSON, write null for an undefined array element, "0" for -0): no JSON round trip first.
    json = canonicalJson(withoutProofs(receipt));
  } catch {
    const safe = JSON.stringify(receipt, (_k, v: unknown) => (typeof v === 'string' ? v.replace(LONE_SURROGATE, '\ufffd') : v));
    json = canonicalJson(withoutProofs(JSON.parse(safe) as Record<string, unknown>));
  }
  return { json, leaf: leafHash(json) };
}
