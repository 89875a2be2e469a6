/**
 * Personal access tokens: their format, their checksum, and their hash.
 *
 * Format (current, v2): `pcl_pat_` + 32 base62 characters of entropy (~190 bits) + 6 base62 characters of
 * CRC-32 over the entropy. The prefix marks the string as a portcullis personal token and the checksum lets
 * a secret scanner confirm a hit offline, without asking us (the scheme GitHub uses for `ghp_` tokens).
 * Legacy v1 tokens are `pcl_v1_` + 40 hex characters, no checksum; they exist only to be revoked in bulk.
 *
 * Only SHA-256 of the whole token is stored. Tokens have ~190 bits of entropy, so a fast hash is the right
 * one: there is nothing to brute-force, and identify stays one hash plus one store call.
 */
import { hash as oneShotHash, randomBytes, randomUUID } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const PAT_PREFIX = 'pcl_pat_';
export const LEGACY_PREFIX = 'pcl_v1_';
const ENTROPY_CHARS = 32;
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const V2_SHAPE = new RegExp(`^${PAT_PREFIX}[0-9A-Za-z]{${ENTROPY_CHARS + CHECKSUM_CHARS}}$`);
const V1_SHAPE = new RegExp(`^${LEGACY_PREFIX}[0-9a-f]{40}$`);

function base62(value: number, width: number): string {
  let out = '';
  let n = value >>> 0;
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function randomBase62(length: number): string {
  // Rejection sampling keeps the alphabet uniform (248 = 4 * 62; bytes above it are dropped).
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function checksum(entropy: string): string {
  return base62(crc32(entropy), CHECKSUM_CHARS);
}

export type TokenFormat = 'v1' | 'v2';

/** A new token string; shown once to its holder, never stored. */
export function generateToken(format: TokenFormat = 'v2'): string {
  if (format === 'v1') return LEGACY_PREFIX + randomBytes(20).toString('hex');
  const entropy = randomBase62(ENTROPY_CHARS);
  return PAT_PREFIX + entropy + checksum(entropy);
}

/** The format of a well-formed token, or null when the string cannot be one of ours (bad shape or checksum). */
export function parseToken(token: string): TokenFormat | null {
  if (V2_SHAPE.test(token)) {
    const body = token.slice(PAT_PREFIX.length);
    return checksum(body.slice(0, ENTROPY_CHARS)) === body.slice(ENTROPY_CHARS) ? 'v2' : null;
  }
  return V1_SHAPE.test(token) ? 'v1' : null;
}

export function hashToken(token: string): string {
  // One-shot: no Hash object for a text this short.
  return oneShotHash('sha256', token, 'hex');
}

export function newTokenId(): string {
  return `tok_${randomUUID().replace(/-/g, '').slice(0, 20)}`;
}
