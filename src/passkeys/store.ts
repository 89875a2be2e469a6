/**
 * Passkeys (WebAuthn credentials) as the store keeps them: the credential id, the principal it signs in,
 * its COSE public key and its signature counter. Nothing secret is held: a passkey's private key never
 * leaves the person's authenticator.
 *
 * The counter moves only forward, atomically (`advance`): of two assertions carrying the same counter —
 * a replay, or a cloned authenticator — one wins and the other is refused, even on two instances at once.
 *
 * Implementations: redis-store.ts and memory-store.ts; one contract suite (test/passkeys/contract.test.ts).
 */

export interface PasskeyRecord {
  /** The credential id, base64url, as the authenticator reports it. */
  id: string;
  principalId: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
  createdAt: string;
  lastUsedAt: string | null;
}

export interface PasskeyStore {
  /** Stores a new credential; false (and nothing changed) when the id is already registered. */
  add(passkey: PasskeyRecord): Promise<boolean>;
  get(id: string): Promise<PasskeyRecord | null>;
  /** The principal's passkeys, oldest first. */
  list(principalId: string): Promise<PasskeyRecord[]>;
  /**
   * Records a successful assertion: sets the counter to `counter` when it is greater than the stored one
   * (or when both are 0: authenticators that keep no counter), and `lastUsedAt`. False when the counter did
   * not move forward: the assertion is a replay or comes from a clone.
   */
  advance(id: string, counter: number, at: string): Promise<boolean>;
  /** Removes the credential when it is the principal's; answers whether it was removed. */
  remove(id: string, principalId: string): Promise<boolean>;
  /**
   * Takes the short lock on the principal's sign-in methods, which serialises their removals (so two that
   * race for the last two methods are decided one after the other): a token when taken, null while another
   * holds it. It lapses after `ttlMs` should its holder die.
   */
  lockMethods(principalId: string, ttlMs: number): Promise<string | null>;
  /** Releases the lock when `token` still holds it. */
  unlockMethods(principalId: string, token: string): Promise<void>;
}
