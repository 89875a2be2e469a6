/**
 * Sign-in challenges: the nonces a SIWE, CACAO or smart-account sign-in (and any other two-step ceremony)
 * hands out in its first step and takes back in its second. A challenge is single-use and short-lived, and
 * it lives in the store, not in the process, so any gateway instance can finish a ceremony another began.
 *
 * Implementations: `redis-store.ts` (on the main store's connection, so it shares its deadlines and its
 * fail-closed behaviour) and `memory-store.ts` (beside the memory store). One contract suite
 * (test/challenges/contract.test.ts) holds both to the same answers.
 */
import { randomBytes } from 'node:crypto';

/** The ceremony a challenge belongs to: a nonce issued for one is never accepted by another. */
export type ChallengePurpose = 'siwe' | 'cacao' | 'smart-account' | (string & {});

export interface Challenge {
  purpose: ChallengePurpose;
  /** The nonce itself (alphanumeric, at least 8 characters, as EIP-4361 asks). */
  value: string;
  /** ISO-8601 times; past `expiresAt` the challenge is gone. */
  issuedAt: string;
  expiresAt: string;
}

export interface ChallengeStore {
  /**
   * Keeps a challenge until `expiresAt`. Throws when the same purpose and value are already held (a
   * collision of random nonces is a bug, never something to paper over by overwriting).
   */
  put(challenge: Challenge): Promise<void>;
  /**
   * Takes a challenge back, once: answers it and forgets it in one atomic step, so of two racing takes
   * exactly one gets it. Null when it was never issued, was taken already, or has expired.
   */
  take(purpose: ChallengePurpose, value: string): Promise<Challenge | null>;
}

/** Thrown by `put` when the challenge is already held. */
export class ChallengeExists extends Error {
  constructor() {
    super('challenge already issued');
    this.name = 'ChallengeExists';
  }
}

/** A fresh challenge: 128 random bits as 32 hex characters (alphanumeric, as an EIP-4361 nonce must be). */
export function newChallenge(purpose: ChallengePurpose, ttlMs: number, now = Date.now()): Challenge {
  return {
    purpose,
    value: randomBytes(16).toString('hex'),
    issuedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttlMs).toISOString(),
  };
}
