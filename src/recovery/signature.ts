/**
 * The server's side of the recovery phrase (src/recovery/phrase.ts has the derivation): the message a
 * recovery signs and the check of its signature, with node:crypto alone.
 */
import { createPublicKey, verify } from 'node:crypto';

export function recoveryMessage(authOrigin: string, challenge: string): string {
  return `portcullis recovery v1\n${authOrigin}\n${challenge}`;
}

/** Whether `signature` (base64url) is the key's Ed25519 signature of `message`; false for any malformed input. */
export function verifyRecoverySignature(publicKey: string, message: string, signature: string): boolean {
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: publicKey }, format: 'jwk' });
    return verify(null, Buffer.from(message), key, Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}
