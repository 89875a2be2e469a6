/**
 * Sign-in sessions as the store keeps them. A session is a random id handed to the browser in a cookie; the
 * store holds only its SHA-256 (`hash`), bound to one principal, with two lifetimes: idle (ended after
 * `idleMs` without a request) and absolute (`expiresAt`, however active). Ending one session, or every
 * session of a principal ("sign out everywhere"), is one store write, so every gateway instance sees it on
 * its very next request: nothing about a session is cached in a process.
 *
 * Times are epoch milliseconds from the caller's clock (tests move it); the store decides expiry from the
 * stored times and that clock, and lets Redis drop the keys of dead sessions on its own.
 *
 * Implementations: redis-store.ts (on the store's connection) and memory-store.ts; one contract suite
 * (test/sessions/contract.test.ts) holds both to the same answers.
 */

/** `pending-2fa`: a primary sign-in succeeded and a second factor is still owed; the session acts as nobody. */
export type SessionState = 'active' | 'pending-2fa';

export interface SessionRecord {
  /** Hex SHA-256 of the session id; the id itself is never stored. */
  hash: string;
  principalId: string;
  /** How the person signed in: `passkey`, `siwe`, `cacao`, `smart-account`, `recovery`, ... */
  method: string;
  state: SessionState;
  createdAt: number;
  lastSeenAt: number;
  /** The absolute end: createdAt + absoluteMs. */
  expiresAt: number;
}

export interface SessionStore {
  /** Stores a new session and indexes it under its principal. */
  create(session: SessionRecord, idleMs: number): Promise<void>;
  /**
   * The live session with this hash, its idle clock restarted at `now`; null when unknown, ended, idle for
   * `idleMs` or more, or past `expiresAt` (a dead session found here is removed).
   */
  touch(hash: string, now: number, idleMs: number): Promise<SessionRecord | null>;
  /**
   * Moves a live pending-2fa session to active, with its new absolute end (the second factor is where the
   * sign-in completes); false when it is gone, dead at `now`, or not pending.
   */
  activate(hash: string, expiresAt: number, now: number, idleMs: number): Promise<boolean>;
  /** Ends one session; false when there was none. */
  end(hash: string): Promise<boolean>;
  /** Ends every session of the principal; how many there were (dead ones not yet collected may count). */
  endAll(principalId: string): Promise<number>;
}

/** Whether a stored session is still alive at `now`. */
export function alive(s: SessionRecord, now: number, idleMs: number): boolean {
  return now < s.expiresAt && now - s.lastSeenAt < idleMs;
}

/** How long the store should keep a session's key from `now`: until the earlier of its two ends. */
export function keepMs(s: SessionRecord, now: number, idleMs: number): number {
  return Math.max(1, Math.min(s.expiresAt - now, s.lastSeenAt + idleMs - now));
}
