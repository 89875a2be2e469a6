/**
 * Token and principal records held in this process, kept true by Redis itself: server-assisted
 * client-side caching (RESP3 `CLIENT TRACKING`, node-redis' `clientSideCache`). The reads go over a
 * connection of their own, in RESP3 with tracking on; Redis remembers which keys that connection read and,
 * when any client changes one of them, pushes an invalidation down the same connection, and node-redis drops
 * the cached reply. A steady call of a token in use therefore reads no identity record from Redis.
 *
 * What makes a cached record safe to use is one rule: **a request uses cached records only after a fence —
 * a command on the tracking connection sent after the request arrived — has been answered.** Redis is one
 * thread and one connection is one ordered stream: a revocation (or any change) that some gateway finished
 * before this request arrived was executed before the fence, so its invalidation was queued on this
 * connection before the fence's reply, and node-redis handles a connection's bytes in order. By the time
 * the fence resolves, every stale entry is gone; what is then read from the cache is as fresh as a read
 * from Redis at the fence. The fence is one `PING` (on a cluster, a keyed `EXISTS` on the identity slot,
 * so a moved slot or a master cut off from its cluster answers MOVED or CLUSTERDOWN instead of a pong); it
 * costs Redis almost nothing and goes out beside the call's other first-round-trip commands.
 *
 * Lost connection: node-redis clears the cache when the socket errors or closes (a killed connection, a
 * server restart) and turns tracking on again when it reconnects; the fence fails while it is down, so the
 * call fails closed (503 `store-unavailable`), never on a cached guess. A fence that misses its deadline
 * (a frozen server, a silent partition) replaces the connection, dropping the cache with it.
 *
 * Why a connection of its own: in the default tracking mode Redis tracks every key a connection reads,
 * scripts' reads included, so the store's main connection would be sent an invalidation for every
 * rate-limit window and ledger key it touches; and RESP3 changes the shape of some script replies the
 * rest of the store decodes. Only identity reads go here.
 *
 * Layout read (redis-identity.ts writes it): `th:<hash>` -> token id, `t:<id>` {doc, principal, revokedAt},
 * `p:<id>` {doc, rung, aup}, `po:<id>` scope order, `ps:<id>` scopes, `legacy-revoked`. Each is a plain
 * read command (GET, HMGET, LRANGE, HGETALL, EXISTS), which is what node-redis caches. Not the identify
 * script: node-redis caches no script reply, and Redis 7.0 tracks for a script only the keys it is given
 * in KEYS, while identify finds the token's and the principal's keys by reading the hash index, so a change
 * to them would never be pushed. A token seen for the first time costs the fence and three round trips (hash -> token
 * -> principal); every later call of it, none but the fence. On top of node-redis' cache of replies sits
 * a small map of identities already decoded, by token hash, dropped whole on any invalidation or flush
 * (CountedCache counts them): a steady identify is the fence and one map lookup, no decoding.
 */
import { BasicPooledClientSideCache, createClient, createCluster, ErrorReply, type RedisArgument } from '@redis/client';
import {
  closeForGood,
  clusterOptions,
  connectOrRefuse,
  connectWithin,
  DeadlineExceeded,
  destroyForGood,
  errorMessage,
  nodeOptions,
  withDeadline,
  type RedisStoreOptions,
} from './connection.js';
import { StoreUnavailable } from './errors.js';
import type { Identity, PrincipalRecord } from './store.js';
import { decodePrincipal, decodeToken } from './redis-identity.js';

/** Cached replies kept at most (least recently used first out); about five per active token. */
export const IDENTITY_CACHE_ENTRIES = 50_000;

/** The tracking connection's CLIENT SETNAME, so an operator can tell it apart in CLIENT LIST. */
export const TRACKING_NAME = 'portcullis-identity';

/**
 * node-redis' cache of replies, counting every invalidation and every flush (a push from Redis, a lost
 * connection, a re-learnt slot map), so the decoded identities built on its replies can be dropped with
 * them. The pooled variant, because a cluster needs one cache shared by its node connections; on one
 * primary it behaves as the basic one (cleared on error and close).
 */
class CountedCache extends BasicPooledClientSideCache {
  generation = 0;

  override invalidate(key: RedisArgument | null): void {
    this.generation += 1;
    super.invalidate(key);
  }

  override clear(resetStats?: boolean): void {
    this.generation += 1;
    super.clear(resetStats);
  }
}

function makeSingle(options: RedisStoreOptions, cache: CountedCache) {
  return createClient({ url: options.url, ...nodeOptions(options), name: TRACKING_NAME, RESP: 3, clientSideCache: cache });
}

function makeCluster(options: RedisStoreOptions, nodes: string[], cache: CountedCache) {
  // One cache for every node's connection; node-redis clears all of it when any node's connection errors
  // or the slot map is re-learnt.
  const cluster = clusterOptions(options, nodes);
  return createCluster({ ...cluster, defaults: { ...cluster.defaults, name: TRACKING_NAME }, RESP: 3, clientSideCache: cache });
}

type Single = ReturnType<typeof makeSingle>;
type Cluster = ReturnType<typeof makeCluster>;
type Tracking = Single | Cluster;

function makeClient(options: RedisStoreOptions, entries: number): { client: Tracking; cache: CountedCache } {
  const cache = new CountedCache({ maxEntries: entries, evictPolicy: 'LRU', recordStats: false });
  const nodes = options.clusterNodes ?? [];
  const client = nodes.length > 0 ? makeCluster(options, nodes, cache) : makeSingle(options, cache);
  client.on('error', (err: Error) => options.onError?.(err));
  return { client, cache };
}

/** Error replies that mean "not now" (a failover, a cut-off master, a loading replica), not a bug. */
const UNAVAILABLE_REPLY = /^(CLUSTERDOWN|TRYAGAIN|LOADING|MASTERDOWN|MOVED|ASK)\b/;

export class IdentityCache {
  #client: Tracking;
  #cache: CountedCache;
  /**
   * Identities decoded from the cached replies, by token hash: a hit costs no decoding. Valid only while
   * the cache they were read from has seen no invalidation or flush since (`#memoGeneration`); any one
   * drops them all, since identity changes are rare and the replies stay cached beneath.
   */
  readonly #memo = new Map<string, Identity>();
  #memoCache: CountedCache | null = null;
  #memoGeneration = -1;
  readonly #memoLimit: number;
  #closed = false;
  /** The tracking connection was reported lost and not yet restored (see #watch). */
  #lost = false;
  readonly #options: RedisStoreOptions;
  readonly #entries: number;
  /** The identity family's prefix (redis-identity.ts). */
  readonly #p: string;
  readonly #timeoutMs: number;

  private constructor(client: Tracking, cache: CountedCache, options: RedisStoreOptions, prefix: string, entries: number) {
    this.#client = client;
    this.#cache = cache;
    this.#memoLimit = Math.max(1, Math.ceil(entries / 5));
    this.#options = options;
    this.#p = prefix;
    this.#entries = entries;
    this.#timeoutMs = options.commandTimeoutMs ?? 2000;
  }

  /** Connects the tracking connection; rejects with StoreUnavailable when it cannot within the budget. */
  static async connect(options: RedisStoreOptions, prefix: string, entries = IDENTITY_CACHE_ENTRIES): Promise<IdentityCache> {
    const { client, cache } = makeClient(options, entries);
    await connectOrRefuse(client, options.connectTimeoutMs ?? 3000, {
      refused: (err) =>
        `redis refused ${err.command} (${err.reply}) on the identity cache's connection, which needs RESP3 and CLIENT TRACKING; ` +
        'set store.identityCacheEntries: 0 to run without the cache on this Redis or proxy',
      unavailable: (why) => `cannot reach redis for identity reads: ${why}`,
    });
    const identity = new IdentityCache(client, cache, options, prefix, entries);
    identity.#watch(client);
    return identity;
  }

  /**
   * Tells the operator (onIdentityTracking) when the tracking connection goes and when it is back, once each
   * per outage: a socket error or a missed fence deadline is "lost", the next ready connection "restored".
   * On a cluster, any node's connection counts.
   */
  #watch(client: Tracking): void {
    const report = this.#options.onIdentityTracking;
    if (!report) return;
    const lost = (err: unknown): void => {
      if (this.#closed || this.#lost || client !== this.#client) return;
      this.#lost = true;
      report('lost', errorMessage(err));
    };
    const ready = (): void => {
      if (this.#closed || !this.#lost || client !== this.#client) return;
      this.#lost = false;
      report('restored');
    };
    if ('masters' in client) {
      client.on('node-error', lost);
      client.on('node-ready', ready);
    } else {
      client.on('error', lost);
      client.on('ready', ready);
    }
  }

  #key(namespace: string, id: string): string {
    return `${this.#p}${namespace}:${id}`;
  }

  /** Cached replies held now (for tests and the bench). */
  get size(): number {
    return this.#cache.size();
  }

  /** The token by its hash, with its principal and the legacy flag, after the fence. */
  identify(tokenHash: string): Promise<Identity | null> {
    return this.#call('identify', async (c, cache) => {
      // After the fence: a generation that moved since the memo was filled means some record changed.
      if (this.#memoCache !== cache || this.#memoGeneration !== cache.generation) {
        this.#memo.clear();
        this.#memoCache = cache;
        this.#memoGeneration = cache.generation;
      }
      const known = this.#memo.get(tokenHash);
      if (known) return copyRecord(known);
      const generation = cache.generation;
      const identity = await this.#identify(c, tokenHash);
      // Kept only if nothing was invalidated while it was being read (else it may hold a stale part).
      if (identity !== null && cache.generation === generation && this.#memoCache === cache) {
        if (this.#memo.size >= this.#memoLimit) this.#memo.delete(this.#memo.keys().next().value!);
        this.#memo.set(tokenHash, copyRecord(identity));
      }
      return identity;
    });
  }

  async #identify(c: Tracking, tokenHash: string): Promise<Identity | null> {
    const id = await c.get(this.#key('th', tokenHash));
    if (id === null) return null;
    const [doc, principalId, revokedAt] = await c.hmGet(this.#key('t', String(id)), ['doc', 'principal', 'revokedAt']);
    if (doc == null || principalId == null) return null;
    const [principal, legacy] = await Promise.all([this.#principal(c, String(principalId)), c.exists(`${this.#p}legacy-revoked`)]);
    if (principal === null) return null;
    return { token: decodeToken(doc, revokedAt ?? null), principal, legacyRevoked: legacy === 1 };
  }

  /** Whether the tracking connection answers (the fence alone): part of the store's liveness. */
  async ping(): Promise<void> {
    await this.#call('ping', async () => undefined);
  }

  getPrincipal(id: string): Promise<PrincipalRecord | null> {
    return this.#call('getPrincipal', (c) => this.#principal(c, id));
  }

  async #principal(c: Tracking, id: string): Promise<PrincipalRecord | null> {
    const [fields, order, scopes] = await Promise.all([
      c.hmGet(this.#key('p', id), ['doc', 'rung', 'aup']),
      c.lRange(this.#key('po', id), 0, -1),
      c.hGetAll(this.#key('ps', id)),
    ]);
    if (fields[0] == null) return null;
    const byId = scopes as Record<string, string>;
    return decodePrincipal([fields[0], fields[1] ?? null, fields[2] ?? null, order.map((s) => byId[String(s)] ?? null)]);
  }

  /** Answers once every invalidation Redis queued for this connection before now has been applied. */
  #fence(c: Tracking): Promise<unknown> {
    if ('masters' in c) {
      // Keyed, so it goes to the identity slot's master (the connection its invalidations come on) and is
      // refused there when that node no longer serves the slot.
      const key = this.#p;
      return c.sendCommand(key, false, ['EXISTS', key]);
    }
    return c.sendCommand(['PING']);
  }

  /** The fence, then `read`, under one deadline; a missed deadline replaces the connection (and the cache). */
  #call<T>(operation: string, read: (c: Tracking, cache: CountedCache) => Promise<T>): Promise<T> {
    const client = this.#client;
    const cache = this.#cache;
    let work: Promise<T>;
    try {
      work = this.#fence(client).then(() => read(client, cache));
    } catch (err) {
      return Promise.reject(this.#failure(operation, client, err));
    }
    // Not an async layer (every identify passes here): the failure is mapped where the deadline settles.
    return withDeadline(work, this.#timeoutMs, (err) => this.#failure(operation, client, err));
  }

  /** What a failed call rejects with. */
  #failure(operation: string, client: Tracking, err: unknown): Error {
    // An error reply is a bug, except those that say a cluster node cannot serve the slot right now.
    if (err instanceof TypeError || (err instanceof ErrorReply && !UNAVAILABLE_REPLY.test(err.message))) return err;
    if (err instanceof DeadlineExceeded) {
      this.#reset(client);
      return new StoreUnavailable(`redis ${operation}: no reply within ${this.#timeoutMs} ms`, { cause: err });
    }
    return new StoreUnavailable(`redis ${operation} failed: ${errorMessage(err)}`, { cause: err });
  }

  #reset(stale: Tracking): void {
    if (this.#closed || stale !== this.#client) return;
    const { client: fresh, cache } = makeClient(this.#options, this.#entries);
    if (!this.#lost) {
      this.#lost = true;
      this.#options.onIdentityTracking?.('lost', `no reply within ${this.#timeoutMs} ms`);
    }
    this.#client = fresh;
    this.#cache = cache;
    this.#watch(fresh);
    destroyForGood(stale);
    // As the store's own reset: a cluster connect stalled on a hung node is given up and tried afresh.
    const connecting =
      'masters' in fresh ? connectWithin(fresh, this.#options.connectTimeoutMs ?? 3000, () => !this.#closed && this.#client === fresh) : fresh.connect();
    connecting.catch(() => {
      if ('masters' in fresh) setTimeout(() => this.#reset(fresh), 500).unref();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    await closeForGood(this.#client, this.#timeoutMs);
  }
}

/**
 * A deep copy of a record read from the store (plain objects, arrays and primitives, as decoded from its
 * JSON), so that no caller can change what the memo holds. What structuredClone gives for such data, at
 * about a fifth of its cost on every call; anything that is not plain data is left to structuredClone.
 */
export function copyRecord<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(copyRecord) as T;
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return structuredClone(v);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const value = copyRecord((v as Record<string, unknown>)[k]);
    // A "__proto__" key (JSON.parse makes it an own field) stays a field, as structuredClone keeps it.
    if (k === '__proto__') Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true });
    else out[k] = value;
  }
  return out as T;
}
