/**
 * TOTP enrolments as the store keeps them, per principal: the shared secret (it must be readable to check
 * a code; it never reaches a log or an answer after enrolment), whether enrolment was confirmed, the last
 * time step a code was accepted for (so no code — nor any earlier one — works twice), the SHA-256 hashes of
 * the one-time recovery codes, and a count of wrong codes for the attempt limit.
 *
 * Every check-and-use is one atomic store step: two instances given the same code at once accept it once.
 *
 * Implementations: redis-store.ts and memory-store.ts; one contract suite (test/totp/contract.test.ts).
 */

export interface TotpRecord {
  principalId: string;
  /** Base32 secret. */
  secret: string;
  state: 'pending' | 'active';
  /** The last accepted time step; -1 before any. */
  lastStep: number;
  createdAt: string;
}

export interface TotpStore {
  get(principalId: string): Promise<TotpRecord | null>;
  /** Starts (or restarts) an enrolment; false, changing nothing, when an active one exists. */
  begin(record: TotpRecord): Promise<boolean>;
  /** Confirms a pending enrolment with the step of its first code and the recovery-code hashes. */
  activate(principalId: string, step: number, recoveryHashes: string[]): Promise<boolean>;
  /** Accepts `step` once: true when it is later than every step accepted before (and records it). */
  useStep(principalId: string, step: number): Promise<boolean>;
  /** Uses a recovery code once: true when the hash was one of the principal's unused codes. */
  useRecoveryCode(principalId: string, hash: string): Promise<boolean>;
  /** Unused recovery codes left. */
  recoveryCodesLeft(principalId: string): Promise<number>;
  /** Counts one wrong code; the number of wrong codes within the window that this one opened or joined. */
  failure(principalId: string, now: number, windowMs: number): Promise<number>;
  /** Wrong codes within the current window (0 when it has passed). */
  failures(principalId: string, now: number): Promise<number>;
  clearFailures(principalId: string): Promise<void>;
}
