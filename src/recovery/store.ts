/**
 * Account recovery as the store keeps it, per principal: the recovery public key (Ed25519, derived on the
 * person's side from a recovery phrase the server never sees) with an index from the key to its principal,
 * the SHA-256 of the offline one-time recovery secret, at most one pending recovery, and the last recovery
 * the owner's own sign-in cancelled (so the owner is told).
 *
 * Starting a recovery uses the one-time secret up in the same atomic step that opens it, so a secret starts
 * at most one recovery, even with racing requests on two instances.
 *
 * Implementations: redis-store.ts and memory-store.ts; one contract suite (test/recovery/contract.test.ts).
 */

export interface RecoveryKey {
  principalId: string;
  /** Raw Ed25519 public key, base64url (43 characters). */
  publicKey: string;
  /** SHA-256 (hex) of the one-time secret; null once used. */
  secretHash: string | null;
  createdAt: string;
}

export interface PendingRecovery {
  id: string;
  principalId: string;
  startedAt: number;
  /** Epoch ms before which it cannot complete: startedAt + recovery.delayHours. */
  completesAt: number;
}

/** What the owner is told after a pending recovery was ended by their own sign-in or session. */
export interface CancelledRecovery {
  id: string;
  startedAt: number;
  cancelledAt: number;
  /** What ended it: the sign-in method (`passkey`, `siwe`, `cacao`, `smart-account`, `totp`), `session` or `cancel`. */
  by: string;
}

export type StartResult = 'started' | 'secret-invalid' | 'pending';

export interface RecoveryStore {
  /** Sets the principal's recovery key and secret, replacing (and unindexing) any previous key. */
  setUp(key: RecoveryKey): Promise<void>;
  keyOf(principalId: string): Promise<RecoveryKey | null>;
  byPublicKey(publicKey: string): Promise<RecoveryKey | null>;
  /**
   * Opens a recovery when `secretHash` is the principal's unused secret and none is pending: the secret is
   * used up and the recovery stored, atomically.
   */
  start(recovery: PendingRecovery, secretHash: string): Promise<StartResult>;
  pending(principalId: string): Promise<PendingRecovery | null>;
  /** Ends the principal's pending recovery (completed or cancelled); false when there was none. */
  end(principalId: string, id?: string): Promise<boolean>;
  /**
   * Cancels the principal's pending recovery, if any, and in the same atomic step records it as the
   * owner's notice (replacing an earlier one); null when none was pending.
   */
  cancel(principalId: string, by: string, at: number): Promise<CancelledRecovery | null>;
  /** The last recovery cancelled by the owner, for GET /v1/recovery and the console. */
  lastCancelled(principalId: string): Promise<CancelledRecovery | null>;
}
