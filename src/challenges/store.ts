/**
 * Single-use, short-lived challenges for sign-in ceremonies (WebAuthn challenges, SIWE and CACAO nonces,
 * ...): a ceremony is two stateless handlers — the first puts a challenge here with what it must remember,
 * the second takes it back — so any gateway instance can finish a ceremony another began, and no challenge
 * works twice: `take` removes it atomically, whoever asks first wins, and a failed attempt has used it up.
 *
 * Keys are namespaced by `kind` (`passkey-register`, `passkey-login`, `siwe`, ...), so a challenge issued
 * for one ceremony is unknown to every other. Expiry is decided on the caller's clock (tests move it) from
 * the stored end; Redis also drops the key by itself.
 *
 * Implementations: redis-store.ts and memory-store.ts; one contract suite (test/challenges/contract.test.ts).
 */

export interface StoredChallenge<T = Record<string, unknown>> {
  /** What the first handler needs the second to know (the principal, the username, ...). */
  data: T;
  /** Epoch ms after which the challenge is dead. */
  expiresAt: number;
}

export interface ChallengeStore {
  /** Stores a challenge under `kind` and `key`; a second put of the same key replaces nothing (false). */
  put(kind: string, key: string, challenge: StoredChallenge, now: number): Promise<boolean>;
  /** Removes and returns the challenge when it exists and `now` is before its end; null otherwise. */
  take<T = Record<string, unknown>>(kind: string, key: string, now: number): Promise<StoredChallenge<T> | null>;
}
