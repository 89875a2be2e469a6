/**
 * A receipt's leaf in the log: the RFC 8785 (JSON Canonicalization Scheme, the `canonicalize` package)
 * form of the receipt without its proof — the members the log adds around it (`logIndex`,
 * `inclusionProof`, `checkpoint`, `pending`) are left out, so the bytes are fixed before the receipt is
 * sequenced and anyone can recompute them from what GET /v1/receipts/{id} answers. Keys sorted by UTF-16
 * code units, no whitespace, numbers in their shortest ECMAScript form (receipts hold integers only).
 *
 * The leaf hash is RFC 6962's SHA-256(0x00 || canonical receipt): the one hash a call costs.
 */
import canonicalize from 'canonicalize';
import { configure } from 'safe-stable-stringify';
import { leafHash } from './merkle.js';

/**
 * The settlement's canonical form, at about a third of `canonicalize`'s cost (a receipt was 4 % of a small
 * call's CPU): sorted keys compared by UTF-16 code units, `String(n)` for numbers, JSON.stringify's escapes —
 * RFC 8785 for what a receipt holds, byte for byte (test/receipts/canonical.unit.test.ts proves it on real
 * receipts). Strict, so what RFC 8785 refuses (NaN, Infinity) throws as `canonicalize` does; a lone
 * surrogate it would escape instead, so storableReceipt keeps such receipts away from it.
 */
const fastCanonical = configure({ deterministic: true, strict: true, bigint: false });

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
  const text = canonicalize(withoutProofs(receipt));
  if (text === undefined) throw new TypeError('receipt cannot be canonicalized');
  return Buffer.from(text, 'utf8');
}

export function receiptLeafHash(receipt: Record<string, unknown>): Buffer {
  return leafHash(canonicalReceipt(receipt));
}

/** A lone UTF-16 surrogate: JSON can carry it, RFC 8785 cannot. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * What the store writes for a receipt: its JSON, and the leaf hash of the receipt that JSON reads back as
 * (so a member JSON drops, such as an undefined one, cannot make the two differ). A string RFC 8785 refuses
 * (a lone surrogate, e.g. in a model name an upstream echoed) is stored with U+FFFD in its place rather than
 * failing the settlement; the common case pays nothing for the check.
 */
export function storableReceipt(receipt: Record<string, unknown>): { json: string; leaf: Buffer } {
  let json = JSON.stringify(receipt);
  // JSON.stringify writes a lone surrogate as the escape `\udXXX` (and nothing else of its own as "\ud"), so a
  // receipt whose JSON lacks it holds none, and the fast form is its RFC 8785 form. A receipt with one — or
  // with a literal backslash before "ud", which merely costs more — takes the `canonicalize` path below.
  if (!json.includes('\\ud')) {
    try {
      return { json, leaf: leafHash(Buffer.from(fastCanonical(withoutProofs(receipt)), 'utf8')) };
    } catch {
      // NaN or Infinity: the careful path below, as before
    }
  }
  try {
    // No JSON round trip first: for a receipt of plain values (strings, finite numbers, booleans, null, plain
    // objects and arrays) RFC 8785 of the object is RFC 8785 of what its JSON reads back as — both drop
    // undefined members, both call toJSON, both write null for an undefined array element, and -0 is "0"
    // in both. What could differ (NaN, Infinity) makes canonicalize throw, and then the catch below takes
    // the careful path. Reading the JSON back was a tenth of a receipt's cost.
    return { json, leaf: receiptLeafHash(receipt) };
  } catch {
    json = JSON.stringify(receipt, (_k, v: unknown) => (typeof v === 'string' ? v.replace(LONE_SURROGATE, '\ufffd') : v));
    return { json, leaf: receiptLeafHash(JSON.parse(json) as Record<string, unknown>) };
  }
}
