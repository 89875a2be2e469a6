/**
 * The data key: what seals the few secrets the server must read back (TOTP shared secrets), so that a copy
 * of the store (a Redis dump, an AOF file, a backup) holds no secret in clear.
 *
 * AES-256-GCM with a fresh 96-bit nonce per seal, and the record's identity (its family and principal) as
 * additional authenticated data, so a sealed value copied onto another principal's record does not open. A
 * sealed value names the key it was sealed with:
 *
 *   pcl-sealed:v1:<key id>:<base64url(nonce | ciphertext | tag)>
 *
 * A keyring is one or more keys, the first being the one new seals use; the others only open what they
 * sealed before, so a new key is rolled in by putting it first and rewrapping (`portcullis admin data-key
 * rewrap`), then dropping the old one. Written as `id:base64,id:base64`, or a lone base64 key whose id is
 * derived from it. Each key is 32 random bytes (`portcullis admin data-key new` prints one).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const PREFIX = 'pcl-sealed:v1:';
const NONCE = 12;
const TAG = 16;

export class DataKeyError extends Error {}

export interface DataKeyring {
  /** The id of the key new seals use. */
  readonly currentId: string;
  /** True when this keyring was generated for this process (nothing configured). */
  readonly ephemeral: boolean;
  seal(plaintext: string, aad: string): string;
  /** The plaintext, or a DataKeyError when the value was sealed under a key this ring lacks or was altered. */
  open(sealed: string, aad: string): string;
  /** True when the value is sealed (as opposed to a record written in clear before sealing existed). */
  isSealed(value: string): boolean;
  /** True when the value is in clear or sealed under a key other than the current one. */
  needsRewrap(value: string): boolean;
}

const idOf = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);

function decodeKey(text: string, where: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new DataKeyError(`${where}: a data key is 32 bytes in base64 (44 characters); this one decodes to ${key.length} bytes`);
  return key;
}

/** Parses a keyring: `id:base64[,id:base64...]` or one bare base64 key. The first key seals. */
export function parseKeyring(spec: string, where = 'PORTCULLIS_DATA_KEY', ephemeral = false): DataKeyring {
  const entries = spec
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry, i) => {
      const at = entry.indexOf(':');
      const key = decodeKey(at > 0 ? entry.slice(at + 1) : entry, `${where}, key ${i + 1}`);
      const id = at > 0 ? entry.slice(0, at) : idOf(key);
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new DataKeyError(`${where}, key ${i + 1}: a key id is 1 to 32 letters, digits, '-' or '_'`);
      return [id, key] as const;
    });
  if (entries.length === 0) throw new DataKeyError(`${where} is empty`);
  const keys = new Map(entries);
  if (keys.size !== entries.length) throw new DataKeyError(`${where} names one key id twice`);
  const currentId = entries[0]![0];
  const current = entries[0]![1];
  return {
    currentId,
    ephemeral,
    seal(plaintext, aad) {
      const nonce = randomBytes(NONCE);
      const cipher = createCipheriv('aes-256-gcm', current, nonce).setAAD(Buffer.from(aad));
      const body = Buffer.concat([nonce, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${currentId}:${body.toString('base64url')}`;
    },
    open(sealed, aad) {
      if (!sealed.startsWith(PREFIX)) throw new DataKeyError('not a sealed value');
      const rest = sealed.slice(PREFIX.length);
      const colon = rest.indexOf(':');
      const id = rest.slice(0, colon);
      const key = keys.get(id);
      if (colon < 0 || !key) throw new DataKeyError(`sealed under data key "${id}", which this gateway does not hold`);
      const body = Buffer.from(rest.slice(colon + 1), 'base64url');
      if (body.length < NONCE + TAG) throw new DataKeyError('a sealed value too short to be one');
      const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, NONCE)).setAAD(Buffer.from(aad));
      decipher.setAuthTag(body.subarray(body.length - TAG));
      try {
        return Buffer.concat([decipher.update(body.subarray(NONCE, body.length - TAG)), decipher.final()]).toString('utf8');
      } catch {
        throw new DataKeyError(`a value sealed under data key "${id}" does not open: altered, or moved from another record`);
      }
    },
    isSealed: (value) => value.startsWith(PREFIX),
    needsRewrap: (value) => !value.startsWith(`${PREFIX}${currentId}:`),
  };
}

/** 32 random bytes in base64: one new data key. */
export function newDataKey(): string {
  return randomBytes(32).toString('base64');
}
