/**
 * What billing and verification keep beside the main store: which payment-processor events were applied,
 * which Stripe customer belongs to which principal, the outcome of each verification check (card,
 * identity, screening: state, evidence reference and expiry, never the evidence), the checkout sessions
 * created per request id, research applications, and storage-credit grants.
 *
 * A capability with its own store, like reviews and jobs: in Redis on the store's connection
 * (redis-store.ts) or in this process beside the memory store (memory-store.ts); one contract suite
 * (test/billing/contract.test.ts) holds both to the same answers. Every write that two gateway instances
 * could race on is one atomic step (first wins, or newest wins by the event's time), so webhooks can be
 * applied in any order, on any instance.
 */

/** The outcome of one verification check, as the payment processor reported it. */
export interface CheckRecord {
  state: 'pending' | 'verified' | 'refused';
  /** A stable code for a refusal (`prepaid-card-not-accepted`, `document_unverified_other`, `canceled`, ...). */
  reason: string | null;
  /** The processor's reference for the evidence (payment method, verification session); never the evidence. */
  evidenceRef: string | null;
  /** When the processor reported it (epoch ms of the event): an older report never replaces a newer one. */
  at: number;
  /** ISO-8601 expiry of the evidence, when it has one. */
  expiresAt: string | null;
}

export type CheckKind = 'card' | 'identity' | 'screening';

export interface ApplicationRecord {
  id: string;
  principalId: string;
  status: 'submitted' | 'approved' | 'refused';
  submittedAt: string;
  decidedAt: string | null;
  /** The operator's reason for a refusal, or note on an approval. */
  decisionNote: string | null;
  /** The validated body of POST /v1/research/applications, as sent. */
  request: {
    verificationMode: string;
    policyVersion: string;
    consent: Record<string, unknown>;
    authorizedResearch: Record<string, unknown>;
    purpose: string;
    scope: { id: string; tasks: string[] };
  };
}

/** A checkout session created for one (principal, requestId). */
export interface CheckoutRecord {
  sku: string;
  sessionId: string;
  url: string;
  createdAt: string;
}

export interface StorageGrant {
  operationId: string;
  principalId: string;
  microUSD: number;
  grantedAt: string;
  expiresAt: string;
}

export const MAX_APPLICATION_PAGE = 500;

export interface BillingStore {
  /** True when the event id has been applied (by any instance). */
  eventApplied(eventId: string): Promise<boolean>;
  /** Records the event as applied, with what it did; the first record stands. */
  markEventApplied(eventId: string, outcome: string): Promise<void>;

  /**
   * Links a Stripe customer to a principal. The first link of a principal stands (two instances racing
   * to create a customer agree on the first stored); every customer id is mapped back to its principal.
   * Returns the principal's customer id as stored.
   */
  linkCustomer(principalId: string, customerId: string): Promise<string>;
  customerOf(principalId: string): Promise<string | null>;
  principalOfCustomer(customerId: string): Promise<string | null>;

  /** Stores a check unless a newer one (larger `at`) is stored; answers whether it was stored. */
  putCheck(principalId: string, kind: CheckKind, check: CheckRecord): Promise<boolean>;
  checks(principalId: string): Promise<Partial<Record<CheckKind, CheckRecord>>>;

  /** The checkout of (principal, requestId): stores `record` unless one is stored; answers the stored one. */
  putCheckout(principalId: string, requestId: string, record: CheckoutRecord): Promise<CheckoutRecord>;
  getCheckout(principalId: string, requestId: string): Promise<CheckoutRecord | null>;

  putApplication(app: ApplicationRecord): Promise<void>;
  getApplication(id: string): Promise<ApplicationRecord | null>;
  /** Applications, oldest first, optionally of one status, at most MAX_APPLICATION_PAGE. */
  listApplications(status?: ApplicationRecord['status']): Promise<ApplicationRecord[]>;
  /** The principal's applications, oldest first. */
  applicationsOf(principalId: string): Promise<ApplicationRecord[]>;
  /**
   * Moves a submitted application to approved or refused, atomically: of racing decisions exactly one
   * applies. Answers the record after the call and whether this call decided it; null when unknown.
   */
  decideApplication(
    id: string,
    status: 'approved' | 'refused',
    note: string | null,
    at: string,
  ): Promise<{ record: ApplicationRecord; decided: boolean } | null>;

  /** Records a storage-credit grant once per operation id; answers whether it was applied now. */
  grantStorage(grant: StorageGrant): Promise<boolean>;
  storageGrants(principalId: string): Promise<StorageGrant[]>;
}
