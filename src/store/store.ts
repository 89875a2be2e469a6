/**
 * The store: every piece of state that changes per request lives behind this one narrow interface, so any
 * number of gateway processes can share it (Redis) or one process can run alone on it (memory).
 *
 * Implementations: `redis.ts` (the `redis` client against a real server) and `memory.ts` (the embedded
 * default). One contract suite (`test/store/contract.test.ts`) runs against both, so the two cannot drift.
 *
 * Failure mode, decided once: the store is authoritative. When it cannot be reached, calls fail closed with
 * 503 `store-unavailable`; nothing is admitted on a guess and no cached token outlives a revocation (the
 * Redis store's identity cache answers only after a round trip on the connection its invalidations use).
 */

/** A scope the principal may work under: an id and the tasks it approves. */
export interface ScopeGrant {
  id: string;
  status: 'approved' | 'pending' | 'revoked';
  tasks: string[];
  approvedAt: string; // ISO-8601
}

/** A verification rung held by the principal (card, identity, business, contracted). */
export interface RungGrant {
  id: string;
  grantedAt: string; // ISO-8601
  expiresAt: string; // ISO-8601; past it the principal is unverified again
  source: string; // 'operator' | 'card-webhook' | ...
}

export interface AupConsent {
  version: string;
  at: string; // ISO-8601
}

export interface PrincipalRecord {
  /** did:web:<domain>:tenant:<id> */
  id: string;
  username: string;
  createdAt: string;
  rung: RungGrant | null;
  aup: AupConsent | null;
  scopes: ScopeGrant[];
}

/** A personal access token as stored: never the token itself, only its SHA-256. */
export interface TokenRecord {
  id: string;
  principalId: string;
  label: string;
  /** 'v2' tokens are the current, checksummed format; 'v1' are legacy and revoked in bulk. */
  format: 'v1' | 'v2';
  hash: string; // hex SHA-256 of the whole token string
  createdAt: string;
  revokedAt: string | null;
}

/** What `identify` resolves a token hash to: from the Redis store's identity cache, or one script. */
export interface Identity {
  token: TokenRecord;
  principal: PrincipalRecord;
  /** True when legacy (v1) tokens have been revoked in bulk; the caller decides what that means for `token`. */
  legacyRevoked: boolean;
}

/** A durable record of one call that reached admission step 3 or later. */
export interface Receipt {
  id: string;
  principalId: string;
  createdAt: string;
  /** The UTC day (YYYY-MM-DD) the receipt is listed under; the day of `createdAt` when absent. */
  day?: string;
  [field: string]: unknown;
}

/** The UTC day a receipt is listed under. */
export function receiptDay(receipt: Receipt): string {
  return typeof receipt.day === 'string' ? receipt.day : receipt.createdAt.slice(0, 10);
}

/**
 * Every method rejects with StoreUnavailable (`errors.ts`) when the store cannot be asked: unreachable, no
 * reply within its deadline, or closed. Records handed in and out are copies: mutating them changes nothing.
 */
export interface Store {
  readonly kind: 'memory' | 'redis';

  // Principals -------------------------------------------------------------------------------------------
  /**
   * Creates a principal; rejects (throws StoreConflict) when the id exists, atomically: of racing creates
   * exactly one wins. Duplicate scope ids in `scopes` collapse as `putScope` would (first place, last value).
   */
  createPrincipal(principal: PrincipalRecord): Promise<void>;
  getPrincipal(id: string): Promise<PrincipalRecord | null>;
  /**
   * A page of principal ids, for the operator's listing: `cursor` is null for the first page, else the
   * `next` of the page before; `next` is null after the last page. Pages hold about `limit` ids (the Redis
   * store walks its keys with SCAN, whose batches are approximate); every principal that exists for the whole
   * walk is listed exactly once.
   */
  listPrincipals(cursor: string | null, limit: number): Promise<{ ids: string[]; next: string | null }>;
  /**
   * Sets the rung (and the AUP consent that came with it); returns the updated record or null if unknown.
   * `aup: null` means no consent came with this rung: the consent already recorded is kept, never erased.
   */
  setRung(id: string, rung: RungGrant, aup: AupConsent | null): Promise<PrincipalRecord | null>;
  /** Adds or replaces one scope by id; returns the updated record or null if unknown. */
  putScope(id: string, scope: ScopeGrant): Promise<PrincipalRecord | null>;

  // Tokens -----------------------------------------------------------------------------------------------
  /**
   * Stores a token record; indexed by hash (for identify), by id (for revoke) and by principal (for list).
   * Throws StoreConflict when the id or the hash is already stored: a put never overwrites (or un-revokes).
   */
  putToken(token: TokenRecord): Promise<void>;
  /**
   * Token by hash, its principal, and the legacy-revocation flag; null when either is unknown. Always as
   * fresh as a read made after the call began (the Redis store's cache waits for its fence: identity-cache.ts).
   */
  identify(tokenHash: string): Promise<Identity | null>;
  /** The principal's tokens in creation order, revoked ones included; [] when none. */
  listTokens(principalId: string): Promise<TokenRecord[]>;
  /**
   * Marks one token revoked; returns the record, or null when the id is unknown. Revoking twice is a no-op:
   * the first revocation's time stands.
   */
  revokeToken(tokenId: string, at: string): Promise<TokenRecord | null>;
  /**
   * Revokes every legacy (v1) token at once and raises the legacy-revoked flag; returns how many were active
   * before. Atomic: racing calls count each token once.
   */
  revokeLegacyTokens(at: string): Promise<number>;

  // Receipts ---------------------------------------------------------------------------------------------
  /**
   * Writes a receipt once: a second write with the same id is ignored (idempotent on the call id). The
   * receipt is listed under its principal and day (`receiptDay`), in order of `createdAt`.
   */
  putReceipt(receipt: Receipt): Promise<void>;
  getReceipt(id: string): Promise<Receipt | null>;
  /** The principal's receipts of one UTC day (YYYY-MM-DD), oldest first; [] when none. */
  listReceipts(principalId: string, day: string): Promise<Receipt[]>;

  /** Liveness of the backing store. */
  ping(): Promise<void>;

  /**
   * Resolves once the money writes made before it are held by as many replicas as the deployment asks
   * (true), or when waiting for them timed out (false: they stand on the primary only). A store without
   * replicas answers true at once. Settlements, grants and checkpoints wait for it (store/replica-acks.ts).
   */
  acknowledgeWrites(): Promise<boolean>;
  close(): Promise<void>;
}

/** Thrown when a create meets an existing record. */
export class StoreConflict extends Error {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'StoreConflict';
  }
}
