/**
 * Checkpoints of the receipt log, in the C2SP formats that transparency-log tooling reads:
 *
 *   tlog-checkpoint (https://c2sp.org/tlog-checkpoint): the note text is three lines — the log's origin
 *     (its name, from config), the tree size in decimal, the root hash in standard base64.
 *   signed-note (https://c2sp.org/signed-note): the text, a blank line, then one line per signature,
 *     `— <key name> <base64(4-byte key id || Ed25519 signature over the text)>`. The key name is the
 *     origin; the key id is the first 4 bytes of SHA-256(name || 0x0A || 0x01 || 32-byte public key). A
 *     verifier key is published as `<name>+<key id, 8 hex digits>+<base64(0x01 || public key)>`, the form Go's
 *     `golang.org/x/mod/sumdb/note` and the other tlog clients take.
 *
 * `openCheckpoint` is the one reader: it checks the signature line made with the given key (other
 * signatures, e.g. a witness's cosignature, are allowed and ignored) and then parses the checkpoint.
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { HASH_BYTES } from './merkle.js';

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
}

const ED25519_ALG = 0x01;

/** The raw 32-byte Ed25519 public key. */
export function rawPublicKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' }) as { crv?: string; x?: string };
  if (jwk.crv !== 'Ed25519' || !jwk.x) throw new TypeError('not an Ed25519 public key');
  return Buffer.from(jwk.x, 'base64url');
}

/**
 * Standard base64 (RFC 4648 section 4), as signed-note requires it: the alphabet, padding to a multiple of
 * four, and the one canonical spelling (no stray bits in the last character). Node's Buffer.from skips
 * what it cannot read instead, so a line of garbage around a real value would decode to that value, and
 * two readers of one note (Go's note package refuses such a line) would disagree. Null when not base64.
 */
export function decodeBase64Strict(text: string): Buffer | null {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : null;
}

/** A key name may not be empty nor hold a space, a plus or a control character (signed-note). */
export function validKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+\p{Cc}]/u.test(name);
}

export function keyId(name: string, publicKey: KeyObject): Buffer {
  return createHash('sha256')
    .update(Buffer.from(`${name}\n`, 'utf8'))
    .update(Buffer.of(ED25519_ALG))
    .update(rawPublicKey(publicKey))
    .digest()
    .subarray(0, 4);
}

/** The verifier key string: `<name>+<hex key id>+<base64(0x01 || public key)>`. */
export function verifierKey(name: string, publicKey: KeyObject): string {
  const key = Buffer.concat([Buffer.of(ED25519_ALG), rawPublicKey(publicKey)]).toString('base64');
  return `${name}+${keyId(name, publicKey).toString('hex')}+${key}`;
}

/** Reads a verifier key string back into its name and public key. */
export function parseVerifierKey(vkey: string): { name: string; publicKey: KeyObject } {
  // Split at the first two '+' only: the base64 key may hold '+' itself (as Go's note.NewVerifier reads it).
  const m = /^([^+]+)\+([0-9a-fA-F]{8})\+([A-Za-z0-9+/]+=*)$/.exec(vkey.trim());
  const [, name, id, key] = m ?? [];
  if (!name || !id || !key || !validKeyName(name)) throw new TypeError('not a verifier key (name+id+key)');
  const raw = decodeBase64Strict(key);
  if (!raw || raw.length !== 33 || raw[0] !== ED25519_ALG) throw new TypeError('the verifier key is not an Ed25519 key');
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.subarray(1).toString('base64url') }, format: 'jwk' });
  if (keyId(name, publicKey).toString('hex') !== id.toLowerCase()) throw new TypeError('the verifier key id does not match its key');
  return { name, publicKey };
}

export function checkpointText(c: Checkpoint): string {
  if (!validKeyName(c.origin)) throw new TypeError(`the log name "${c.origin}" cannot be a checkpoint origin`);
  return `${c.origin}\n${c.size}\n${c.root.toString('base64')}\n`;
}

/** Signs a checkpoint as a signed note: the text, a blank line, the signature line. */
export function signCheckpoint(c: Checkpoint, privateKey: KeyObject): string {
  const text = checkpointText(c);
  const publicKey = createPublicKey(privateKey);
  const sig = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n— ${c.origin} ${Buffer.concat([keyId(c.origin, publicKey), sig]).toString('base64')}\n`;
}

/** Said of a note that ends with a blank line (an editor's or a shell's extra newline, most often). */
export const TRAILING_BLANK =
  'the checkpoint ends with a blank line: a signed note ends right after the newline of its last signature line (remove the empty line at the end of the file)';

export type Opened = { ok: true; checkpoint: Checkpoint } | { ok: false; reason: string };

function parseCheckpointText(text: string): Checkpoint | string {
  const lines = text.split('\n');
  // The text ends with a newline, so the last element is empty; extension lines may follow the root.
  if (lines.length < 4 || lines.at(-1) !== '') return 'the checkpoint has fewer than three lines';
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!validKeyName(origin)) return 'the checkpoint origin line is not a valid name';
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText) || !Number.isSafeInteger(Number(sizeText))) return 'the checkpoint size is not a decimal number';
  const root = decodeBase64Strict(rootText);
  if (!root || root.length !== HASH_BYTES) return 'the checkpoint root is not a base64 SHA-256 hash';
  return { origin, size: Number(sizeText), root };
}

/**
 * Checks the signed note against the key (its name is the checkpoint's origin) and parses the checkpoint.
 * `origin`, when given, is the log name the reader expects.
 */
export function openCheckpoint(note: string, publicKey: KeyObject, origin?: string): Opened {
  if (typeof note !== 'string') return { ok: false, reason: 'the checkpoint is not text' };
  if (note.endsWith('\n\n')) return { ok: false, reason: TRAILING_BLANK };
  const at = note.lastIndexOf('\n\n');
  if (at < 0) return { ok: false, reason: 'the checkpoint has no signatures (no blank line)' };
  const text = note.slice(0, at + 1);
  const parsed = parseCheckpointText(text);
  if (typeof parsed === 'string') return { ok: false, reason: parsed };
  if (origin !== undefined && parsed.origin !== origin) return { ok: false, reason: `the checkpoint is of log "${parsed.origin}", not "${origin}"` };
  const id = keyId(parsed.origin, publicKey);
  const sigLines = note.slice(at + 2).split('\n');
  if (sigLines.at(-1) !== '') return { ok: false, reason: 'the signature block does not end with a newline' };
  // Every line must be a signature line, its signature standard base64, as Go's note.Open has it: a reader
  // that skipped what it cannot read would count lines another reader refuses.
  const blobs: Array<{ name: string; blob: Buffer }> = [];
  for (const line of sigLines.slice(0, -1)) {
    const m = /^— (\S+) (\S+)$/u.exec(line);
    const blob = m ? decodeBase64Strict(m[2]!) : null;
    if (!m || !blob || blob.length < 5)
      return { ok: false, reason: `a signature line is malformed (not "— <name> <standard base64>"): ${JSON.stringify(line.slice(0, 80))}` };
    blobs.push({ name: m[1]!, blob });
  }
  for (const { name, blob } of blobs) {
    if (name !== parsed.origin) continue;
    if (blob.length !== 4 + 64 || !blob.subarray(0, 4).equals(id)) continue;
    return verify(null, Buffer.from(text, 'utf8'), publicKey, blob.subarray(4))
      ? { ok: true, checkpoint: parsed }
      : { ok: false, reason: 'the checkpoint signature does not match (wrong key, or the checkpoint was changed)' };
  }
  return { ok: false, reason: `the checkpoint carries no signature by the key ${id.toString('hex')} of "${parsed.origin}"` };
}

/** The size a note claims, without checking it (to pick which checkpoint is newer before verifying). */
export function claimedSize(note: string): number | null {
  const m = /^[^\n]+\n(0|[1-9][0-9]*)\n/.exec(note);
  return m ? Number(m[1]) : null;
}
