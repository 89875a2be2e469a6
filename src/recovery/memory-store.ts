/** Recovery keys and pending recoveries in one process (contract suite in test/recovery/contract.test.ts). */
import type { CancelledRecovery, PendingRecovery, RecoveryKey, RecoveryStore, StartResult } from './store.js';

export class MemoryRecoveryStore implements RecoveryStore {
  readonly #keys = new Map<string, RecoveryKey>();
  readonly #byKey = new Map<string, string>();
  readonly #pending = new Map<string, PendingRecovery>();
  readonly #cancelled = new Map<string, CancelledRecovery>();

  async setUp(key: RecoveryKey): Promise<void> {
    const old = this.#keys.get(key.principalId);
    if (old) this.#byKey.delete(old.publicKey);
    this.#keys.set(key.principalId, { ...key });
    this.#byKey.set(key.publicKey, key.principalId);
  }

  async keyOf(principalId: string): Promise<RecoveryKey | null> {
    const k = this.#keys.get(principalId);
    return k ? { ...k } : null;
  }

  async byPublicKey(publicKey: string): Promise<RecoveryKey | null> {
    const pid = this.#byKey.get(publicKey);
    return pid ? this.keyOf(pid) : null;
  }

  async start(recovery: PendingRecovery, secretHash: string): Promise<StartResult> {
    const k = this.#keys.get(recovery.principalId);
    if (!k || k.secretHash === null || k.secretHash !== secretHash) return 'secret-invalid';
    if (this.#pending.has(recovery.principalId)) return 'pending';
    k.secretHash = null;
    this.#pending.set(recovery.principalId, { ...recovery });
    return 'started';
  }

  async pending(principalId: string): Promise<PendingRecovery | null> {
    const p = this.#pending.get(principalId);
    return p ? { ...p } : null;
  }

  async end(principalId: string, id?: string): Promise<boolean> {
    const p = this.#pending.get(principalId);
    if (!p || (id !== undefined && p.id !== id)) return false;
    this.#pending.delete(principalId);
    return true;
  }

  async cancel(principalId: string, by: string, at: number): Promise<CancelledRecovery | null> {
    const p = this.#pending.get(principalId);
    if (!p) return null;
    this.#pending.delete(principalId);
    const notice = { id: p.id, startedAt: p.startedAt, cancelledAt: at, by };
    this.#cancelled.set(principalId, notice);
    return { ...notice };
  }

  async lastCancelled(principalId: string): Promise<CancelledRecovery | null> {
    const n = this.#cancelled.get(principalId);
    return n ? { ...n } : null;
  }
}
