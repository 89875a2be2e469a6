/**
 * Principals and tokens in Redis, under the identity family's prefix (`familyPrefix('id')`, redis.ts).
 * Every operation that reads or writes more than one key is one script (lua/), so it is atomic — `setRung`
 * and `putScope` cannot lose each other's update — and one round trip: `identify` resolves hash -> token ->
 * principal -> scopes -> legacy flag in one EVALSHA. With the identity cache on (the default), identify and
 * getPrincipal are served by identity-cache.ts instead, from the same keys; the writes stay here.
 *
 * Layout (under the identity prefix):
 *   p:<id>     hash  doc (principal JSON minus rung/aup/scopes), rung (JSON), aup (JSON)
 *   ps:<id>    hash  scope id -> scope JSON
 *   po:<id>    list  scope ids in approval order (a hash has no order; a re-approval keeps its place)
 *   t:<id>     hash  doc (token JSON minus revokedAt), principal, revokedAt (absent while active)
 *   th:<hash>  string token id, the identify index
 *   pt:<id>    list  token ids of a principal, in creation order
 *   tv1        set   ids of legacy (v1) tokens, so a bulk revocation finds them without a scan
 *   legacy-revoked  string  time of the first bulk legacy revocation
 * The namespaces differ before the id, so no id (principal ids contain ':') can collide with another key.
 */
import { loadLua, loadReadOnlyLua } from './lua.js';
import { isCluster, type RedisRunner } from './connection.js';
import { StoreConflict, type AupConsent, type Identity, type PrincipalRecord, type RungGrant, type ScopeGrant, type TokenRecord } from './store.js';

const LIB = 'lua/principal.lib.lua';
const CREATE_PRINCIPAL = loadLua(import.meta.url, LIB, 'lua/create-principal.lua');
const GET_PRINCIPAL = loadReadOnlyLua(import.meta.url, LIB, 'lua/get-principal.lua');
const SET_RUNG = loadLua(import.meta.url, LIB, 'lua/set-rung.lua');
const PUT_SCOPE = loadLua(import.meta.url, LIB, 'lua/put-scope.lua');
const IDENTIFY = loadReadOnlyLua(import.meta.url, LIB, 'lua/identify.lua');
const PUT_TOKEN = loadLua(import.meta.url, 'lua/put-token.lua');
const LIST_TOKENS = loadReadOnlyLua(import.meta.url, 'lua/list-tokens.lua');
const REVOKE_TOKEN = loadLua(import.meta.url, 'lua/revoke-token.lua');
const REVOKE_LEGACY = loadLua(import.meta.url, 'lua/revoke-legacy.lua');

/** What identity needs of the store: its scripts and commands under its deadlines and failure mapping. */
type Runner = RedisRunner;

export class RedisIdentity {
  readonly #store: Runner;
  /** The identity family's prefix. */
  readonly #p: string;

  constructor(store: Runner, prefix: string) {
    this.#store = store;
    this.#p = prefix;
  }

  #key(namespace: string, id: string): string {
    return `${this.#p}${namespace}:${id}`;
  }

  #principalKeys(id: string): string[] {
    return [this.#key('p', id), this.#key('ps', id), this.#key('po', id)];
  }

  async createPrincipal(principal: PrincipalRecord): Promise<void> {
    const args = [principalDoc(principal), JSON.stringify(principal.rung), JSON.stringify(principal.aup)];
    for (const scope of principal.scopes) args.push(scope.id, JSON.stringify(scope));
    const created = await this.#store.runScript('createPrincipal', CREATE_PRINCIPAL, this.#principalKeys(principal.id), args);
    if (created !== 1) throw new StoreConflict(`principal ${principal.id}`);
  }

  async getPrincipal(id: string): Promise<PrincipalRecord | null> {
    return decodePrincipal(await this.#store.runScript('getPrincipal', GET_PRINCIPAL, this.#principalKeys(id), []));
  }

  async setRung(id: string, rung: RungGrant, aup: AupConsent | null): Promise<PrincipalRecord | null> {
    const args = [JSON.stringify(rung), aup === null ? '' : JSON.stringify(aup)];
    return decodePrincipal(await this.#store.runScript('setRung', SET_RUNG, this.#principalKeys(id), args));
  }

  async putScope(id: string, scope: ScopeGrant): Promise<PrincipalRecord | null> {
    return decodePrincipal(await this.#store.runScript('putScope', PUT_SCOPE, this.#principalKeys(id), [scope.id, JSON.stringify(scope)]));
  }

  async putToken(token: TokenRecord): Promise<void> {
    const { revokedAt, ...doc } = token;
    const keys = [this.#key('t', token.id), this.#key('th', token.hash), this.#key('pt', token.principalId), `${this.#p}tv1`];
    const args = [token.id, JSON.stringify(doc), token.principalId, revokedAt ?? '', token.format];
    const stored = await this.#store.runScript('putToken', PUT_TOKEN, keys, args);
    if (stored === 0) throw new StoreConflict(`token ${token.id}`);
    if (stored !== 1) throw new StoreConflict('token with this hash');
  }

  async identify(tokenHash: string): Promise<Identity | null> {
    const reply = await this.#store.runScript('identify', IDENTIFY, [this.#key('th', tokenHash), `${this.#p}legacy-revoked`, this.#p], []);
    if (reply === null) return null;
    const [doc, revokedAt, legacyRevoked, principal] = asArray(reply);
    const decoded = decodePrincipal(principal ?? null);
    if (decoded === null) return null;
    return { token: decodeToken(doc, revokedAt), principal: decoded, legacyRevoked: legacyRevoked === 1 };
  }

  async listPrincipals(cursor: string | null, limit: number, timeoutMs: number): Promise<{ ids: string[]; next: string | null }> {
    // SCAN over the principal hashes (`p:<id>`); the cursor is Redis's. On a cluster the identity keys share
    // one hash tag, so they all live on the master of that slot: scan that node.
    const prefix = this.#key('p', '');
    const match = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    return this.#store.command(
      'listPrincipals',
      async (c) => {
        const node = isCluster(c) ? await c.getNodeClientForKey(prefix) : c;
        let at = cursor ?? '0';
        const ids: string[] = [];
        do {
          const reply = await node.scan(at, { MATCH: match, COUNT: Math.max(limit, 10) });
          at = String(reply.cursor);
          for (const key of reply.keys) ids.push(String(key).slice(prefix.length));
        } while (at !== '0' && ids.length < limit);
        return { ids: ids.sort(), next: at === '0' ? null : at };
      },
      timeoutMs,
    );
  }

  async listTokens(principalId: string): Promise<TokenRecord[]> {
    const reply = await this.#store.runScript('listTokens', LIST_TOKENS, [this.#key('pt', principalId), this.#p], []);
    return asArray(reply).map((pair) => {
      const [doc, revokedAt] = asArray(pair);
      return decodeToken(doc, revokedAt);
    });
  }

  async revokeToken(tokenId: string, at: string): Promise<TokenRecord | null> {
    const reply = await this.#store.runScript('revokeToken', REVOKE_TOKEN, [this.#key('t', tokenId)], [at]);
    if (reply === null) return null;
    const [doc, revokedAt] = asArray(reply);
    return decodeToken(doc, revokedAt);
  }

  async revokeLegacyTokens(at: string, timeoutMs: number): Promise<number> {
    const keys = [`${this.#p}tv1`, `${this.#p}legacy-revoked`, this.#p];
    const count = await this.#store.runScript('revokeLegacyTokens', REVOKE_LEGACY, keys, [at], timeoutMs);
    if (typeof count !== 'number') throw new TypeError(`unexpected store reply: ${typeof count}`);
    return count;
  }
}

// Decoding: replies are nested arrays of strings, integers and nulls, laid out as the scripts return them.

function asArray(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) throw new TypeError(`unexpected store reply: ${typeof reply}`);
  return reply;
}

function asString(reply: unknown): string {
  if (typeof reply !== 'string') throw new TypeError(`unexpected store reply: ${typeof reply}`);
  return reply;
}

function parseJson<T>(reply: unknown): T {
  return JSON.parse(asString(reply)) as T;
}

export function decodePrincipal(reply: unknown): PrincipalRecord | null {
  if (reply === null) return null;
  const [doc, rung, aup, scopes] = asArray(reply);
  return {
    ...parseJson<Omit<PrincipalRecord, 'rung' | 'aup' | 'scopes'>>(doc),
    rung: parseJson<RungGrant | null>(rung),
    aup: parseJson<AupConsent | null>(aup),
    // A null here would be an order entry without a scope, which the scripts never write.
    scopes: asArray(scopes)
      .filter((s) => s !== null)
      .map((s) => parseJson<ScopeGrant>(s)),
  };
}

export function decodeToken(doc: unknown, revokedAt: unknown): TokenRecord {
  return {
    ...parseJson<Omit<TokenRecord, 'revokedAt'>>(doc),
    revokedAt: revokedAt === null ? null : asString(revokedAt),
  };
}

function principalDoc(principal: PrincipalRecord): string {
  const { rung: _rung, aup: _aup, scopes: _scopes, ...doc } = principal;
  return JSON.stringify(doc);
}
