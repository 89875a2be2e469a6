/** Passkeys in one process (contract suite in test/passkeys/contract.test.ts), records copied in and out. */
import { randomUUID } from 'node:crypto';
import type { PasskeyRecord, PasskeyStore } from './store.js';

const copy = (p: PasskeyRecord): PasskeyRecord => ({ ...p, transports: [...p.transports] });

export class MemoryPasskeyStore implements PasskeyStore {
  readonly #byId = new Map<string, PasskeyRecord>();
  readonly #locks = new Map<string, { token: string; until: number }>();

  async lockMethods(principalId: string, ttlMs: number): Promise<string | null> {
    const held = this.#locks.get(principalId);
    if (held && held.until > Date.now()) return null;
    const token = randomUUID();
    this.#locks.set(principalId, { token, until: Date.now() + ttlMs });
    return token;
  }

  async unlockMethods(principalId: string, token: string): Promise<void> {
    if (this.#locks.get(principalId)?.token === token) this.#locks.delete(principalId);
  }

  async add(passkey: PasskeyRecord): Promise<boolean> {
    if (this.#byId.has(passkey.id)) return false;
    this.#byId.set(passkey.id, copy(passkey));
    return true;
  }

  async get(id: string): Promise<PasskeyRecord | null> {
    const p = this.#byId.get(id);
    return p ? copy(p) : null;
  }

  async list(principalId: string): Promise<PasskeyRecord[]> {
    return [...this.#byId.values()].filter((p) => p.principalId === principalId).map(copy);
  }

  async remove(id: string, principalId: string): Promise<boolean> {
    if (this.#byId.get(id)?.principalId !== principalId) return false;
    return this.#byId.delete(id);
  }

  async advance(id: string, counter: number, at: string): Promise<boolean> {
    const p = this.#byId.get(id);
    if (!p) return false;
    if (!(counter > p.counter || (counter === 0 && p.counter === 0))) return false;
    p.counter = counter;
    p.lastUsedAt = at;
    return true;
  }
}
