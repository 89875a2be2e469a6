/**
 * Sessions in one process, beside the memory store: the Redis session store's semantics (contract suite in
 * test/sessions/contract.test.ts), records copied in and out.
 */
import { alive, type SessionRecord, type SessionStore } from './store.js';

export class MemorySessionStore implements SessionStore {
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #byPrincipal = new Map<string, Set<string>>();
  #created = 0;

  async create(session: SessionRecord, idleMs: number): Promise<void> {
    // Redis drops dead sessions by itself; here, sweep them now and then so a long-lived process stays small.
    if (++this.#created % 256 === 0) {
      for (const s of [...this.#sessions.values()]) if (!alive(s, session.createdAt, idleMs)) this.#drop(s);
    }
    this.#sessions.set(session.hash, { ...session });
    const set = this.#byPrincipal.get(session.principalId) ?? new Set<string>();
    set.add(session.hash);
    this.#byPrincipal.set(session.principalId, set);
  }

  async touch(hash: string, now: number, idleMs: number): Promise<SessionRecord | null> {
    const s = this.#sessions.get(hash);
    if (!s) return null;
    if (!alive(s, now, idleMs)) {
      this.#drop(s);
      return null;
    }
    s.lastSeenAt = Math.max(s.lastSeenAt, now);
    return { ...s };
  }

  async activate(hash: string, expiresAt: number, now: number, idleMs: number): Promise<boolean> {
    const s = this.#sessions.get(hash);
    if (!s || !alive(s, now, idleMs) || s.state !== 'pending-2fa') return false;
    s.state = 'active';
    s.expiresAt = expiresAt;
    s.lastSeenAt = Math.max(s.lastSeenAt, now);
    return true;
  }

  async end(hash: string): Promise<boolean> {
    const s = this.#sessions.get(hash);
    if (!s) return false;
    this.#drop(s);
    return true;
  }

  async endAll(principalId: string): Promise<number> {
    const set = this.#byPrincipal.get(principalId);
    if (!set) return 0;
    for (const hash of set) this.#sessions.delete(hash);
    this.#byPrincipal.delete(principalId);
    return set.size;
  }

  #drop(s: SessionRecord): void {
    this.#sessions.delete(s.hash);
    this.#byPrincipal.get(s.principalId)?.delete(s.hash);
  }
}
