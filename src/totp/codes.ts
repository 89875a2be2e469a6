/**
 * TOTP codes (RFC 6238 via the `otpauth` library — never by hand) and one-time recovery codes.
 *
 * A code is checked against the steps `window` either side of `now`; the step it matched is returned so the
 * store can accept each step once. Recovery codes are 80 random bits written as four groups of four
 * characters (`k7qm-2xdr-9fwa-h3tc`), stored only as SHA-256 of their normalised form (lower case, no
 * separators): 80 bits leave nothing to brute-force, so a fast hash is the right one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

const PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;

export function newSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app reads (as a QR code, or pasted). */
export function enrolmentUri(issuer: string, label: string, secret: string): string {
  return new TOTP({ issuer, label, secret: Secret.fromBase32(secret), ...PARAMS }).toString();
}

/** The time step a code matches within the window, or null. */
export function matchStep(secret: string, code: string, now: number, window: number): number | null {
  const totp = new TOTP({ secret: Secret.fromBase32(secret), ...PARAMS });
  const delta = totp.validate({ token: code, timestamp: now, window });
  return delta === null ? null : totp.counter({ timestamp: now }) + delta;
}

/** The code of `now` (the tests' authenticator app). */
export function codeAt(secret: string, now: number): string {
  return new TOTP({ secret: Secret.fromBase32(secret), ...PARAMS }).generate({ timestamp: now });
}

const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'; // no 0/o, 1/l/i

export function newRecoveryCodes(n: number): string[] {
  return Array.from({ length: n }, () => {
    let s = '';
    // 16 characters of a 31-letter alphabet: ~79 bits; rejection sampling keeps it uniform.
    while (s.length < 16) for (const b of randomBytes(32)) if (b < 248 && s.length < 16) s += ALPHABET[b % 31];
    return s.match(/.{4}/g)!.join('-');
  });
}

export function hashRecoveryCode(code: string): string {
  return createHash('sha256')
    .update(code.toLowerCase().replace(/[^a-z0-9]/g, ''))
    .digest('hex');
}
