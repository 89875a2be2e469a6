/**
 * The offline one-time recovery secret: shown once when recovery is set up, to be written down and kept
 * apart from the phrase. 26 characters of a 31-letter alphabet (~128 bits) in groups of four; stored only as
 * SHA-256 of its normalised form (lower case, no separators) — at 128 bits a fast hash leaves nothing to
 * brute-force.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

export function newRecoverySecret(): string {
  let s = '';
  while (s.length < 26) for (const b of randomBytes(48)) if (b < 248 && s.length < 26) s += ALPHABET[b % 31];
  return s.match(/.{1,4}/g)!.join('-');
}

export function hashRecoverySecret(secret: string): string {
  return createHash('sha256')
    .update(secret.toLowerCase().replace(/[^a-z0-9]/g, ''))
    .digest('hex');
}
