/** The person's side of recovery against a test gateway: the phrase's key signs a fresh challenge. */
import { recoveryKey, recoveryMessage } from '../../src/recovery/phrase.js';
import type { Answer, Browser } from './browser.js';

export async function signedChallenge(b: Browser, phrase: string): Promise<{ publicKey: string; challenge: string; signature: string }> {
  b.origin = b.gw.origins.auth;
  const { body } = await b.post('auth', '/v1/recovery/challenge', {});
  const key = recoveryKey(phrase);
  return { publicKey: key.publicKey, challenge: body.challenge, signature: key.sign(recoveryMessage(b.gw.origins.auth, body.challenge)) };
}

export async function startRecovery(b: Browser, phrase: string, recoverySecret: string): Promise<Answer> {
  return b.post('auth', '/v1/recovery/start', { ...(await signedChallenge(b, phrase)), recoverySecret });
}

export async function completeRecovery(b: Browser, phrase: string): Promise<Answer> {
  return b.post('auth', '/v1/recovery/complete', await signedChallenge(b, phrase));
}
