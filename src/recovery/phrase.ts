/**
 * The recovery phrase and its key, on the person's side (the CLI, a console page): the server never sees
 * the phrase, only the public key derived from it, and later a signature proving the phrase is held.
 *
 * Derivation (v1), so that any client can reproduce it:
 *   phrase  = a BIP-39 mnemonic, 12 English words (128 bits), by @scure/bip39
 *   seed    = BIP-39 mnemonicToSeed(phrase, passphrase "portcullis-recovery-v1"), first 32 bytes
 *   key     = the Ed25519 key with that seed; publicKey = its raw 32 bytes, base64url
 *   message = "portcullis recovery v1\n" + <auth origin> + "\n" + <challenge>, signed with Ed25519
 * The server side (`verifyRecoverySignature`, in signature.ts) needs only node:crypto, and the server imports
 * only that module: BIP-39 and its word list stay out of the gateway's heap.
 */
import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

const PASSPHRASE = 'portcullis-recovery-v1';
// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): a fixed prefix, then the 32 bytes.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

export function newPhrase(): string {
  return generateMnemonic(wordlist, 128);
}

export function isPhrase(phrase: string): boolean {
  return validateMnemonic(phrase.trim().toLowerCase().split(/\s+/).join(' '), wordlist);
}

export { recoveryMessage } from './signature.js';

export function recoveryKey(phrase: string): { publicKey: string; sign(message: string): string } {
  const normal = phrase.trim().toLowerCase().split(/\s+/).join(' ');
  const seed = mnemonicToSeedSync(normal, PASSPHRASE).subarray(0, 32);
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, Buffer.from(seed)]), format: 'der', type: 'pkcs8' });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' }) as { x: string };
  return { publicKey: jwk.x, sign: (message) => sign(null, Buffer.from(message), privateKey).toString('base64url') };
}
