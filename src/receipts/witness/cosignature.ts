/**
 * Witness cosignatures on the log's checkpoints, as C2SP tlog-cosignature (https://c2sp.org/tlog-cosignature)
 * defines them for Ed25519 (`cosignature/v1`):
 *
 *   verifier key    `<witness name>+<key id, 8 hex>+<base64(0x04 || 32-byte public key)>`, the key id being
 *                   the first 4 bytes of SHA-256(name || 0x0A || 0x04 || public key)
 *   signature line  `— <witness name> <base64(key id || 8-byte big-endian Unix time || Ed25519 signature)>`,
 *                   one more line of the checkpoint's signed note (after the log's own)
 *   signed message  `cosignature/v1\ntime <the same time, decimal>\n` followed by the checkpoint text
 *
 * A witness cosigns a checkpoint only after checking that it extends the last one it cosigned for the log
 * (a consistency proof): a client that requires k cosignatures from witnesses it trusts is shown the same
 * tree as every other client of those witnesses, or none.
 *
 * `requireCosignatures` is the reader's check, shared by `portcullis receipt verify|audit --witness` and
 * the gateway (which keeps only cosignatures that verify).
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { decodeBase64Strict, rawPublicKey, TRAILING_BLANK, validKeyName } from '../note.js';

const COSIGNATURE_V1_ALG = 0x04;
/** tlog-cosignature: the timestamp MUST NOT exceed 2^63 - 1. */
const MAX_TIME = 2n ** 63n - 1n;

export interface WitnessKey {
  name: string;
  /** The 4-byte key id, as it leads a signature. */
  id: Buffer;
  publicKey: KeyObject;
  /** The verifier key string it was read from. */
  vkey: string;
}

export function cosignatureKeyId(name: string, publicKey: KeyObject): Buffer {
  return createHash('sha256')
    .update(Buffer.from(`${name}\n`, 'utf8'))
    .update(Buffer.of(COSIGNATURE_V1_ALG))
    .update(rawPublicKey(publicKey))
    .digest()
    .subarray(0, 4);
}

/** The witness verifier key of a public key: `<name>+<key id>+<base64(0x04 || key)>`. */
export function witnessVerifierKey(name: string, publicKey: KeyObject): string {
  const key = Buffer.concat([Buffer.of(COSIGNATURE_V1_ALG), rawPublicKey(publicKey)]).toString('base64');
  return `${name}+${cosignatureKeyId(name, publicKey).toString('hex')}+${key}`;
}

/** Reads a witness verifier key (a cosignature/v1 Ed25519 key); throws a TypeError saying what is wrong. */
export function parseWitnessKey(vkey: string): WitnessKey {
  const m = /^([^+]+)\+([0-9a-fA-F]{8})\+([A-Za-z0-9+/]+=*)$/.exec(vkey.trim());
  const [, name, id, key] = m ?? [];
  if (!name || !id || !key || !validKeyName(name)) throw new TypeError(`"${vkey}" is not a witness verifier key (name+id+key)`);
  const raw = decodeBase64Strict(key);
  if (!raw || raw.length !== 33 || raw[0] !== COSIGNATURE_V1_ALG) {
    throw new TypeError(`the witness key "${name}" is not a cosignature/v1 Ed25519 key (its key must start with the byte 0x04)`);
  }
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.subarray(1).toString('base64url') }, format: 'jwk' });
  const expected = cosignatureKeyId(name, publicKey);
  if (expected.toString('hex') !== id.toLowerCase()) throw new TypeError(`the witness key "${name}": its key id does not match its key`);
  return { name, id: expected, publicKey, vkey: vkey.trim() };
}

/** The checkpoint text (up to and with the blank line's first newline) and its signature lines. */
export function splitNote(note: string): { text: string; lines: string[] } | null {
  const at = note.lastIndexOf('\n\n');
  if (at < 0 || !note.endsWith('\n') || note.endsWith('\n\n')) return null;
  return { text: note.slice(0, at + 1), lines: note.slice(at + 2, -1).split('\n') };
}

/** The same key, whatever name it is given under (the signed message does not cover the name). */
export function sameWitnessKey(a: WitnessKey, b: WitnessKey): boolean {
  return rawPublicKey(a.publicKey).equals(rawPublicKey(b.publicKey));
}

/**
 * What a signature line is to `key`: another key's (another name or key id: ignored, as signed-note says
 * of unknown keys), `key`'s valid cosignature with its time, or a line in `key`'s name that does not hold:
 * not standard base64, or with `key`'s id and the wrong length, a time above 2^63 - 1, or a signature that
 * does not verify.
 */
type LineCheck = { is: 'other' } | { is: 'valid'; time: number } | { is: 'invalid'; why: string };

function readCosignatureLine(text: string, line: string, key: WitnessKey): LineCheck {
  const m = /^— (\S+) (\S+)$/u.exec(line);
  if (!m || m[1] !== key.name) return { is: 'other' };
  const blob = decodeBase64Strict(m[2]!);
  // Not base64 at all: no key id to tell whose it is, and a note Go's reader refuses whole; so refused too.
  if (!blob) return { is: 'invalid', why: 'its signature is not standard base64' };
  if (!blob.subarray(0, 4).equals(key.id)) return { is: 'other' };
  if (blob.length !== 4 + 8 + 64) return { is: 'invalid', why: `it holds ${blob.length} bytes, not 76` };
  const time = blob.readBigUInt64BE(4);
  if (time > MAX_TIME) return { is: 'invalid', why: 'its time is above 2^63 - 1' };
  const message = Buffer.from(`cosignature/v1\ntime ${time}\n${text}`, 'utf8');
  return verify(null, message, key.publicKey, blob.subarray(12))
    ? { is: 'valid', time: Number(time) }
    : { is: 'invalid', why: 'its signature does not verify' };
}

/** The time (Unix seconds) of `key`'s valid cosignature in `line`, or null when the line is not one. */
export function checkCosignatureLine(text: string, line: string, key: WitnessKey): number | null {
  const r = readCosignatureLine(text, line, key);
  return r.is === 'valid' ? r.time : null;
}

export interface CosignatureCount {
  /** Witnesses whose cosignature on this checkpoint verifies, with the time they cosigned it. */
  cosigned: Array<{ name: string; time: number }>;
  /** Witnesses whose cosignature is missing or does not verify. */
  missing: string[];
  /** Witnesses with a line that claims their name and key id and does not verify (forged or damaged), and why. */
  invalid: Array<{ name: string; why: string }>;
}

export function countCosignatures(note: string, keys: readonly WitnessKey[]): CosignatureCount {
  const parts = splitNote(note);
  const count: CosignatureCount = { cosigned: [], missing: [], invalid: [] };
  for (const key of keys) {
    const read = (parts?.lines ?? []).map((l) => readCosignatureLine(parts!.text, l, key));
    const valid = read.find((r) => r.is === 'valid');
    const invalid = read.find((r) => r.is === 'invalid');
    if (invalid) count.invalid.push({ name: key.name, why: invalid.why });
    if (valid) count.cosigned.push({ name: key.name, time: valid.time });
    else count.missing.push(key.name);
  }
  return count;
}

/**
 * Checks that at least `required` of `keys` cosigned the checkpoint `note`. The reason names the witnesses
 * that did not: a checkpoint shown to this reader that the witnesses never saw is what a split view looks like.
 */
export function requireCosignatures(
  note: string,
  keys: readonly WitnessKey[],
  required: number,
): { ok: true; count: CosignatureCount } | { ok: false; reason: string } {
  if (note.endsWith('\n\n')) return { ok: false, reason: TRAILING_BLANK };
  const count = countCosignatures(note, keys);
  // A line in a trusted witness's name and key id that does not verify refuses the whole checkpoint, as
  // C2SP signed-note recommends of a known key's failed signature (and Go's note.Open does): someone
  // changed or forged it, and that is worth saying rather than counting around.
  const bad = count.invalid[0];
  if (bad) {
    return {
      ok: false,
      reason: `the checkpoint carries a cosignature line in the name and key id of witness ${bad.name} that is not valid (${bad.why}): forged or damaged; refused`,
    };
  }
  if (count.cosigned.length >= required) return { ok: true, count };
  return {
    ok: false,
    reason:
      `the checkpoint carries ${count.cosigned.length} of the ${required} witness cosignature${required === 1 ? '' : 's'} required ` +
      `(not cosigned by: ${count.missing.join(', ')}); the witnesses have not seen this tree: the log may be showing you a split view, or it has not been witnessed yet`,
  };
}
