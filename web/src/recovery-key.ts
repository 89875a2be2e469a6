/**
 * The recovery key on the person's side (docs/sign-in.md, "Recovery"; src/recovery/phrase.ts is the
 * reference the server's tests use): a 12-word BIP-39 phrase (@scure/bip39) -> BIP-39 seed with the passphrase
 * "portcullis-recovery-v1" -> its first 32 bytes as an Ed25519 private key (WebCrypto). The phrase never
 * leaves the page: the server gets the public key at set-up, then a signature of its challenge.
 */
import { generateMnemonic, mnemonicToSeed, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';

const PASSPHRASE = 'portcullis-recovery-v1';
// PKCS#8 wrapping of a raw Ed25519 seed (RFC 8410): a fixed prefix, then the 32 bytes.
const PKCS8_ED25519 = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

function normal(phrase: string): string {
  return phrase.trim().toLowerCase().split(/\s+/).join(' ');
}

function base64url(bytes: ArrayBuffer): string {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function newPhrase(): string {
  return generateMnemonic(wordlist, 128);
}

export interface RecoveryKey {
  publicKey: string;
  sign(message: string): Promise<string>;
}

export async function recoveryKey(phrase: string): Promise<RecoveryKey> {
  if (!validateMnemonic(normal(phrase), wordlist)) throw new Error('that is not a 12-word recovery phrase (check each word)');
  const seed = (await mnemonicToSeed(normal(phrase), PASSPHRASE)).slice(0, 32);
  const pkcs8 = new Uint8Array([...PKCS8_ED25519, ...seed]);
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, true, ['sign']);
  const jwk = await crypto.subtle.exportKey('jwk', privateKey);
  return {
    publicKey: jwk.x!,
    async sign(message) {
      return base64url(await crypto.subtle.sign({ name: 'Ed25519' }, privateKey, new TextEncoder().encode(message)));
    },
  };
}

export function recoveryMessage(authOrigin: string, challenge: string): string {
  return `portcullis recovery v1\n${authOrigin}\n${challenge}`;
}
