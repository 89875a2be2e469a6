/** TOTP enrolments in one process (contract suite in test/totp/contract.test.ts). */
import type { TotpRecord } from './store.js';
import type { SealableTotpStore } from './sealed-store.js';

export class MemoryTotpStore implements SealableTotpStore {
  readonly #records = new Map<string, TotpRecord>();
  readonly #codes = new Map<string, Set<string>>();
  readonly #failures = new Map<string, { n: number; until: number }>();

  async get(principalId: string): Promise<TotpRecord | null> {
    const r = this.#records.get(principalId);
    return r ? { ...r } : null;
  }

  async begin(record: TotpRecord): Promise<boolean> {
    if (this.#records.get(record.principalId)?.state === 'active') return false;
    this.#records.set(record.principalId, { ...record, state: 'pending' });
    return true;
  }

  async activate(principalId: string, step: number, recoveryHashes: string[]): Promise<boolean> {
    const r = this.#records.get(principalId);
    if (!r || r.state !== 'pending') return false;
    r.state = 'active';
    r.lastStep = step;
    this.#codes.set(principalId, new Set(recoveryHashes));
    return true;
  }

  async useStep(principalId: string, step: number): Promise<boolean> {
    const r = this.#records.get(principalId);
    if (!r || r.state !== 'active' || step <= r.lastStep) return false;
    r.lastStep = step;
    return true;
  }

  async useRecoveryCode(principalId: string, hash: string): Promise<boolean> {
    return this.#codes.get(principalId)?.delete(hash) ?? false;
  }

  async recoveryCodesLeft(principalId: string): Promise<number> {
    return this.#codes.get(principalId)?.size ?? 0;
  }

  async failure(principalId: string, now: number, windowMs: number): Promise<number> {
    const f = this.#failures.get(principalId);
    const current = f && f.until > now ? f : { n: 0, until: now + windowMs };
    current.n += 1;
    this.#failures.set(principalId, current);
    return current.n;
  }

  async failures(principalId: string, now: number): Promise<number> {
    const f = this.#failures.get(principalId);
    return f && f.until > now ? f.n : 0;
  }

  async clearFailures(principalId: string): Promise<void> {
    this.#failures.delete(principalId);
  }

  async replaceSecret(principalId: string, expected: string, next: string): Promise<boolean> {
    const r = this.#records.get(principalId);
    if (!r || r.secret !== expected) return false;
    r.secret = next;
    return true;
  }

  async *principals(): AsyncIterable<string> {
    yield* [...this.#records.keys()];
  }
}
