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
import { rawPublicKey, validKeyName } from '../note.js';

const COSIGNATURE_V1_ALG = 0x04;

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
  const raw = Buffer.from(key, 'base64');
  if (raw.length !== 33 || raw[0] !== COSIGNATURE_V1_ALG) {
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
  if (at < 0 || !note.endsWith('\n')) return null;
  return { text: note.slice(0, at + 1), lines: note.slice(at + 2, -1).split('\n') };
}

/** The time (Unix seconds) of `key`'s valid cosignature in `line`, or null when the line is not one. */
export function checkCosignatureLine(text: string, line: string, key: WitnessKey): number | null {
  const m = /^— (\S+) (\S+)$/u.exec(line);
  if (!m || m[1] !== key.name) return null;
  const blob = Buffer.from(m[2]!, 'base64');
  if (blob.length !== 4 + 8 + 64 || !blob.subarray(0, 4).equals(key.id)) return null;
  const time = blob.readBigUInt64BE(4);
  const message = Buffer.from(`cosignature/v1\ntime ${time}\n${text}`, 'utf8');
  return verify(null, message, key.publicKey, blob.subarray(12)) ? Number(time) : null;
}

export interface CosignatureCount {
  /** Witnesses whose cosignature on this checkpoint verifies, with the time they cosigned it. */
  cosigned: Array<{ name: string; time: number }>;
  /** Witnesses whose cosignature is missing or does not verify. */
  missing: string[];
}

export function countCosignatures(note: string, keys: readonly WitnessKey[]): CosignatureCount {
  const parts = splitNote(note);
  const cosigned: CosignatureCount['cosigned'] = [];
  const missing: string[] = [];
  for (const key of keys) {
    const time = parts ? parts.lines.map((l) => checkCosignatureLine(parts.text, l, key)).find((t) => t !== null) : undefined;
    if (time === undefined || time === null) missing.push(key.name);
    else cosigned.push({ name: key.name, time });
  }
  return { cosigned, missing };
}

/**
 * Checks that at least `required` of `keys` cosigned the checkpoint `note`. The reason names the witnesses
 * that did not: a checkpoint shown to this reader that the witnesses never saw is what a split view looks like.
 */
export function requireCosignatures(note: string, keys: readonly WitnessKey[], required: number): { ok: true; count: CosignatureCount } | { ok: false; reason: string } {
  const count = countCosignatures(note, keys);
  if (count.cosigned.length >= required) return { ok: true, count };
  return {
    ok: false,
    reason:
      `the checkpoint carries ${count.cosigned.length} of the ${required} witness cosignature${required === 1 ? '' : 's'} required ` +
      `(not cosigned by: ${count.missing.join(', ')}); the witnesses have not seen this tree: the log may be showing you a split view, or it has not been witnessed yet`,
  };
}
