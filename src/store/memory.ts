/**
 * The embedded store: all state in this process, for a single gateway that runs without Redis (the default)
 * and for tests. It keeps the Redis store's semantics exactly — the contract suite runs against both — so
 * records go in and come out through a JSON round trip: a caller can never mutate stored state through an
 * object it passed in or got back, and whatever would not survive Redis (undefined, Dates as objects) does
 * not survive here either. Nothing is persisted; a restart forgets everything.
 */
import { StoreUnavailable } from './errors.js';
import { MemoryLogTree } from '../receipts/memory-log.js';
import { storableReceipt } from '../receipts/canonical.js';
import {
  receiptDay,
  StoreConflict,
  type AupConsent,
  type Identity,
  type PrincipalRecord,
  type Receipt,
  type RungGrant,
  type ScopeGrant,
  type Store,
  type TokenRecord,
} from './store.js';

function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;

  #closed = false;
  readonly #principals = new Map<string, PrincipalRecord>();
  readonly #tokens = new Map<string, TokenRecord>();
  readonly #tokenIdByHash = new Map<string, string>();
  /** Token ids per principal, in the order they were put (listTokens keeps it, as Redis does with a list). */
  readonly #tokenIdsByPrincipal = new Map<string, string[]>();
  readonly #legacyTokenIds = new Set<string>();
  #legacyRevokedAt: string | null = null;
  readonly #receipts = new Map<string, Receipt>();
  /** Receipt ids by `<day> <principal>`, kept in createdAt order (as the Redis sorted set is). */
  readonly #receiptIndex = new Map<string, Array<{ id: string; at: number }>>();
  /** The receipt log's leaves and tree (src/receipts/memory-log.ts reads and grows it). */
  readonly log = new MemoryLogTree();

  #open(): void {
    // Parity with Redis, where a closed client cannot answer: a use-after-close is an outage, not a no-op.
    if (this.#closed) throw new StoreUnavailable('memory store is closed');
  }

  async createPrincipal(principal: PrincipalRecord): Promise<void> {
    this.#open();
    if (this.#principals.has(principal.id)) throw new StoreConflict(`principal ${principal.id}`);
    const stored = copy(principal);
    // Duplicate scope ids in the input collapse the way putScope would: first position, last value.
    const scopes: ScopeGrant[] = [];
    for (const scope of stored.scopes) upsertScope(scopes, scope);
    stored.scopes = scopes;
    this.#principals.set(stored.id, stored);
  }

  async getPrincipal(id: string): Promise<PrincipalRecord | null> {
    this.#open();
    const stored = this.#principals.get(id);
    return stored === undefined ? null : copy(stored);
  }

  async setRung(id: string, rung: RungGrant, aup: AupConsent | null): Promise<PrincipalRecord | null> {
    this.#open();
    const stored = this.#principals.get(id);
    if (stored === undefined) return null;
    stored.rung = copy(rung);
    if (aup !== null) stored.aup = copy(aup);
    return copy(stored);
  }

  async putScope(id: string, scope: ScopeGrant): Promise<PrincipalRecord | null> {
    this.#open();
    const stored = this.#principals.get(id);
    if (stored === undefined) return null;
    upsertScope(stored.scopes, copy(scope));
    return copy(stored);
  }

  async putToken(token: TokenRecord): Promise<void> {
    this.#open();
    if (this.#tokens.has(token.id)) throw new StoreConflict(`token ${token.id}`);
    if (this.#tokenIdByHash.has(token.hash)) throw new StoreConflict('token with this hash');
    const stored = copy(token);
    this.#tokens.set(stored.id, stored);
    this.#tokenIdByHash.set(stored.hash, stored.id);
    const ids = this.#tokenIdsByPrincipal.get(stored.principalId) ?? [];
    ids.push(stored.id);
    this.#tokenIdsByPrincipal.set(stored.principalId, ids);
    if (stored.format === 'v1') this.#legacyTokenIds.add(stored.id);
  }

  async identify(tokenHash: string): Promise<Identity | null> {
    this.#open();
    const tokenId = this.#tokenIdByHash.get(tokenHash);
    const token = tokenId === undefined ? undefined : this.#tokens.get(tokenId);
    if (token === undefined) return null;
    const principal = this.#principals.get(token.principalId);
    if (principal === undefined) return null;
    return { token: copy(token), principal: copy(principal), legacyRevoked: this.#legacyRevokedAt !== null };
  }

  async listPrincipals(cursor: string | null, limit: number): Promise<{ ids: string[]; next: string | null }> {
    this.#open();
    // In id order; the cursor is the last id handed out, so a principal created meanwhile is not skipped.
    const all = [...this.#principals.keys()].sort().filter((id) => cursor === null || id > cursor);
    const ids = all.slice(0, limit);
    return { ids, next: all.length > limit ? ids[ids.length - 1]! : null };
  }

  async listTokens(principalId: string): Promise<TokenRecord[]> {
    this.#open();
    const ids = this.#tokenIdsByPrincipal.get(principalId) ?? [];
    return ids.flatMap((id) => {
      const token = this.#tokens.get(id);
      return token === undefined ? [] : [copy(token)];
    });
  }

  async revokeToken(tokenId: string, at: string): Promise<TokenRecord | null> {
    this.#open();
    const token = this.#tokens.get(tokenId);
    if (token === undefined) return null;
    token.revokedAt ??= at; // the first revocation's time stands
    return copy(token);
  }

  async revokeLegacyTokens(at: string): Promise<number> {
    this.#open();
    let revoked = 0;
    for (const id of this.#legacyTokenIds) {
      const token = this.#tokens.get(id);
      if (token !== undefined && token.revokedAt === null) {
        token.revokedAt = at;
        revoked += 1;
      }
    }
    this.#legacyRevokedAt ??= at;
    return revoked;
  }

  async putReceipt(receipt: Receipt): Promise<void> {
    this.#open();
    if (this.#receipts.has(receipt.id)) return;
    // Sequenced in the receipt log in the same step (no await): no receipt without its leaf, nor the reverse.
    const { json, leaf } = storableReceipt(receipt);
    this.#receipts.set(receipt.id, { ...(JSON.parse(json) as Receipt), logIndex: this.log.append(leaf) });
    const key = `${receiptDay(receipt)} ${receipt.principalId}`;
    const list = this.#receiptIndex.get(key) ?? [];
    const at = Date.parse(receipt.createdAt) || 0;
    // Sorted insert by (createdAt, id), the order of Redis' ZRANGE on equal scores too.
    let i = list.length;
    while (i > 0 && (list[i - 1]!.at > at || (list[i - 1]!.at === at && list[i - 1]!.id > receipt.id))) i -= 1;
    list.splice(i, 0, { id: receipt.id, at });
    this.#receiptIndex.set(key, list);
  }

  async listReceipts(principalId: string, day: string): Promise<Receipt[]> {
    this.#open();
    const list = this.#receiptIndex.get(`${day} ${principalId}`) ?? [];
    return list.flatMap(({ id }) => {
      const r = this.#receipts.get(id);
      return r === undefined ? [] : [copy(r)];
    });
  }

  async getReceipt(id: string): Promise<Receipt | null> {
    this.#open();
    const stored = this.#receipts.get(id);
    return stored === undefined ? null : copy(stored);
  }

  async ping(): Promise<void> {
    this.#open();
  }

  /** One process has no replicas: every write is as durable as it will ever be once made. */
  async acknowledgeWrites(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

/** Replace by id in place (a re-approval keeps the scope's position), or append a new one. */
function upsertScope(scopes: ScopeGrant[], scope: ScopeGrant): void {
  const at = scopes.findIndex((s) => s.id === scope.id);
  if (at === -1) scopes.push(scope);
  else scopes[at] = scope;
}
