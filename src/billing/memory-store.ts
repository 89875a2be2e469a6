/**
 * The billing store in one process, beside the memory store (the embedded default): the Redis billing
 * store's semantics (contract suite in test/billing/contract.test.ts), records copied in and out.
 */
import {
  MAX_APPLICATION_PAGE,
  type ApplicationRecord,
  type BillingStore,
  type CheckKind,
  type CheckRecord,
  type CheckoutRecord,
  type StorageGrant,
} from './store.js';

const copy = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export class MemoryBillingStore implements BillingStore {
  readonly #events = new Map<string, string>();
  readonly #customers = new Map<string, string>();
  readonly #principalOfCustomer = new Map<string, string>();
  readonly #checks = new Map<string, Partial<Record<CheckKind, CheckRecord>>>();
  readonly #checkouts = new Map<string, CheckoutRecord>();
  readonly #applications = new Map<string, ApplicationRecord>();
  readonly #storage = new Map<string, StorageGrant>();

  async eventApplied(eventId: string): Promise<boolean> {
    return this.#events.has(eventId);
  }

  async markEventApplied(eventId: string, outcome: string): Promise<void> {
    if (!this.#events.has(eventId)) this.#events.set(eventId, outcome);
  }

  async linkCustomer(principalId: string, customerId: string): Promise<string> {
    if (!this.#customers.has(principalId)) this.#customers.set(principalId, customerId);
    this.#principalOfCustomer.set(customerId, principalId);
    return this.#customers.get(principalId)!;
  }

  async customerOf(principalId: string): Promise<string | null> {
    return this.#customers.get(principalId) ?? null;
  }

  async principalOfCustomer(customerId: string): Promise<string | null> {
    return this.#principalOfCustomer.get(customerId) ?? null;
  }

  async putCheck(principalId: string, kind: CheckKind, check: CheckRecord): Promise<boolean> {
    const all = this.#checks.get(principalId) ?? {};
    const old = all[kind];
    if (old && old.at > check.at) return false;
    all[kind] = copy(check);
    this.#checks.set(principalId, all);
    return true;
  }

  async checks(principalId: string): Promise<Partial<Record<CheckKind, CheckRecord>>> {
    return copy(this.#checks.get(principalId) ?? {});
  }

  async putCheckout(principalId: string, requestId: string, record: CheckoutRecord): Promise<CheckoutRecord> {
    const key = `${principalId}\n${requestId}`;
    if (!this.#checkouts.has(key)) this.#checkouts.set(key, copy(record));
    return copy(this.#checkouts.get(key)!);
  }

  async getCheckout(principalId: string, requestId: string): Promise<CheckoutRecord | null> {
    const r = this.#checkouts.get(`${principalId}\n${requestId}`);
    return r ? copy(r) : null;
  }

  async putApplication(app: ApplicationRecord): Promise<void> {
    if (!this.#applications.has(app.id)) this.#applications.set(app.id, copy(app));
  }

  async getApplication(id: string): Promise<ApplicationRecord | null> {
    const a = this.#applications.get(id);
    return a ? copy(a) : null;
  }

  #ordered(): ApplicationRecord[] {
    return [...this.#applications.values()].sort((a, b) => Date.parse(a.submittedAt) - Date.parse(b.submittedAt) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async listApplications(status?: ApplicationRecord['status']): Promise<ApplicationRecord[]> {
    return copy(
      this.#ordered()
        .filter((a) => !status || a.status === status)
        .slice(0, MAX_APPLICATION_PAGE),
    );
  }

  async applicationsOf(principalId: string): Promise<ApplicationRecord[]> {
    return copy(this.#ordered().filter((a) => a.principalId === principalId));
  }

  async decideApplication(id: string, status: 'approved' | 'refused', note: string | null, at: string) {
    const a = this.#applications.get(id);
    if (!a) return null;
    if (a.status !== 'submitted') return { record: copy(a), decided: false };
    a.status = status;
    a.decisionNote = note;
    a.decidedAt = at;
    return { record: copy(a), decided: true };
  }

  async grantStorage(grant: StorageGrant): Promise<boolean> {
    if (this.#storage.has(grant.operationId)) return false;
    this.#storage.set(grant.operationId, copy(grant));
    return true;
  }

  async storageGrants(principalId: string): Promise<StorageGrant[]> {
    return copy([...this.#storage.values()].filter((g) => g.principalId === principalId).sort((a, b) => Date.parse(a.grantedAt) - Date.parse(b.grantedAt)));
  }
}
