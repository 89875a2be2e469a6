/**
 * The shared store: state in Redis (>= 7.0, for EVALSHA_RO and SET NX GET) through the `redis` client, so
 * any number of gateway processes see the same principals, tokens and receipts. This file owns the
 * connection's life (deadlines, replacement, replica acknowledgements) and the key families; what is stored
 * where lives with each capability: principals and tokens in redis-identity.ts, receipts in
 * receipts/redis-receipts.ts, the receipt log in receipts/redis-log.ts, and each capability's own store
 * beside it (src/app/wire.ts).
 * Every capability reaches Redis the same two ways, both through this store so they share its deadline and
 * fail-closed mapping: `runScript` (a `.lua` file, lua.ts) for what must be atomic over several keys, and
 * `command` for one plain command.
 *
 * One primary (`url`) or a Redis Cluster (`clusterNodes`, node-redis' cluster client). A cluster runs a
 * script only when all its keys are in one slot, so keys go in families that no script crosses, each
 * family under its own hash tag on a cluster (on one primary every family is under the plain prefix, the
 * layout it always had):
 *   money     `keyPrefix`, `{pc}:`  the ledger (metering), receipts, the receipt log, jobs. One slot: a
 *             settlement charges, stores the receipt and sequences its leaf in the deployment's one receipt
 *             log in one script, and a job's creation and end are written in the ledger's reserve and
 *             settle scripts — so the log, a global singleton, pins the money of every principal to one master
 *   identity  `familyPrefix('id')`, `{pc:id}:`  principals and tokens (identify derives the token and
 *             principal keys from the hash index, inside the family)
 *   others    each capability its own: `{pc:ses}:`, `{pc:pk}:`, ... (familyPrefix), and TOTP by principal,
 *             `{pc:totp:<principal>}:` (principalPrefix)
 * docs/operators.md ("Redis Cluster") says what this spreads, what it does not, and what sharding the money
 * by principal would take.
 *
 * Failure mode (fail closed, never hang): with Redis down, calls reject with `StoreUnavailable` at once
 * (the offline queue is off) while the client reconnects in the background; with Redis frozen or the peer
 * silently gone, a call rejects when its deadline passes and the connection is replaced. Startup fails
 * with `StoreUnavailable` when no connection is ready within the connect budget.
 */
import { ErrorReply } from '@redis/client';
import { StoreUnavailable } from './errors.js';
import { ReplicaAcks } from './replica-acks.js';
import {
  closeForGood,
  clusterPrefix,
  connectOrRefuse,
  connectWithin,
  DeadlineExceeded,
  destroyForGood,
  errorMessage,
  HASH_TAG,
  isCluster,
  makeClient,
  tagBase,
  withDeadline,
  type Client,
  type RedisRunner,
  type RedisStoreOptions,
} from './connection.js';

export type { RedisStoreOptions } from './connection.js';
import { evalLua, evalLuaRaw, type LuaEvaluator, type LuaScript } from './lua.js';
import { RedisIdentity } from './redis-identity.js';
import { IDENTITY_CACHE_ENTRIES, IdentityCache } from './identity-cache.js';
import { RedisReceipts } from '../receipts/redis-receipts.js';
import type { AupConsent, Identity, PrincipalRecord, Receipt, RungGrant, ScopeGrant, Store, TokenRecord } from './store.js';

// The store ------------------------------------------------------------------------------------------------

export class RedisStore implements Store, RedisRunner {
  readonly kind = 'redis' as const;

  /** Replaced (never repaired) when a reply misses its deadline; see #reset. */
  #client: Client;
  #closed = false;
  readonly #prefix: string;
  readonly #identity: RedisIdentity;
  /** Identity reads, cached in this process and invalidated by Redis (identity-cache.ts); null when off. */
  #identityCache: IdentityCache | null = null;
  readonly #receipts: RedisReceipts;
  /** The configured prefix without a trailing ':', the base of every family's hash tag on a cluster. */
  readonly #base: string;
  /** On a cluster: every key carries the prefix's hash tag, and keyless commands are routed by it. */
  readonly #cluster: boolean;
  readonly #commandTimeoutMs: number;
  readonly #bulkTimeoutMs: number;

  readonly #options: RedisStoreOptions;
  readonly #acks: ReplicaAcks;
  /** With `replicaAcks: auto`: the replicas the money master had online at the last look. */
  #replicasOnline = 0;
  #replicaTimer: NodeJS.Timeout | undefined;

  private constructor(client: Client, options: RedisStoreOptions) {
    this.#client = client;
    this.#options = options;
    this.#cluster = (options.clusterNodes?.length ?? 0) > 0;
    const configured = options.keyPrefix ?? 'pc:';
    this.#prefix = this.#cluster ? clusterPrefix(configured) : configured;
    // An operator's own {tag} in the prefix means: everything in that one slot, no families.
    this.#base = HASH_TAG.test(configured) ? '' : tagBase(configured);
    this.#identity = new RedisIdentity(this, this.familyPrefix('id'));
    this.#receipts = new RedisReceipts(this, this.#prefix);
    this.#commandTimeoutMs = options.commandTimeoutMs ?? 2000;
    this.#bulkTimeoutMs = options.bulkTimeoutMs ?? 30_000;
    const wanted = options.replicaAcks ?? 'auto';
    const timeoutMs = options.replicaAckTimeoutMs ?? 1000;
    this.#acks = new ReplicaAcks({
      replicas: () => (wanted === 'auto' ? Math.min(1, this.#replicasOnline) : wanted),
      timeoutMs,
      wait: (n, t) => this.#call('wait', (c) => this.#toMoneyMaster(c, ['WAIT', String(n), String(t)]), t + this.#commandTimeoutMs).then(Number),
      onShortfall: (confirmed, needed) => {
        // A replica that stopped confirming may be gone for good (its master failed over to it): look again
        // now rather than at the next round, so `auto` stops waiting for a replica that is not there.
        if (wanted === 'auto') void this.#lookForReplicas().catch(() => undefined);
        options.onReplicaShortfall?.(confirmed, needed);
      },
    });
  }

  /** A command for the master of the money keys' slot (on one primary, the primary). */
  #toMoneyMaster(c: Client, args: string[]): Promise<unknown> {
    return isCluster(c) ? c.sendCommand(this.#prefix, false, args) : c.sendCommand(args);
  }

  /** Counts the money master's replicas that are online (INFO replication), for `replicaAcks: auto`. */
  async #lookForReplicas(): Promise<void> {
    const info = String(await this.#call('info', (c) => this.#toMoneyMaster(c, ['INFO', 'replication'])));
    this.#replicasOnline = [...info.matchAll(/^slave\d+:.*state=online/gm)].length;
  }

  /**
   * Resolves once the money writes made before this call are held by the replicas `replicaAcks` asks for
   * (true), or when `replicaAckTimeoutMs` passed first (false: the writes stand on the master only).
   */
  acknowledgeWrites(): Promise<boolean> {
    return this.#acks.acknowledge();
  }

  /**
   * Connects and resolves once Redis answers; rejects with StoreUnavailable when it cannot within
   * `connectTimeoutMs` (refused, unroutable, or accepting connections but frozen).
   */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const client = makeClient(options);
    // The cluster client's own rejection only says no root node would do; the reason (refused, "cluster
    // support disabled", a bad password) came as an 'error' event, so the startup error carries the last one.
    // Set by the listener below; typed wide so the check in the message below is not narrowed to its first value.
    let lastError = null as string | null;
    const remember = (err: Error): void => {
      lastError = errorMessage(err);
    };
    client.on('error', remember);
    try {
      await connectOrRefuse(client, options.connectTimeoutMs ?? 3000, {
        refused: (err) =>
          `redis refused HELLO 3 (${err.reply}): the gateway speaks RESP3 to Redis on every connection, so it needs Redis 6 or later, or a proxy that passes HELLO 3`,
        unavailable: (why) => `cannot reach redis: ${why}${lastError !== null && lastError !== why ? ` (${lastError})` : ''}`,
      });
    } finally {
      client.off('error', remember);
    }
    const store = new RedisStore(client, options);
    if ((options.identityCacheEntries ?? IDENTITY_CACHE_ENTRIES) > 0) {
      try {
        store.#identityCache = await IdentityCache.connect(options, store.familyPrefix('id'), options.identityCacheEntries);
      } catch (err) {
        client.destroy();
        throw err;
      }
    }
    if ((options.replicaAcks ?? 'auto') === 'auto') {
      await store.#lookForReplicas().catch(() => undefined);
      store.#replicaTimer = setInterval(() => void store.#lookForReplicas().catch(() => undefined), 10_000).unref();
    }
    return store;
  }

  /**
   * Runs one call under a deadline that includes the reply, and maps "could not ask Redis" to
   * StoreUnavailable; a Redis error reply is a bug and stays what it is. node-redis' own command timeout
   * stops counting once the command is written (https://github.com/redis/node-redis/pull/3008), so a
   * frozen server or a half-open connection would otherwise hang the call for as long as TCP takes to
   * notice.
   */
  #call<T>(operation: string, run: (client: Client) => Promise<T>, timeoutMs = this.#commandTimeoutMs): Promise<T> {
    const client = this.#client;
    let work: Promise<T>;
    try {
      work = run(client);
    } catch (err) {
      return Promise.reject(this.#failure(operation, client, timeoutMs, err));
    }
    // Not an async layer: every store command passes here (five a chat call), so the failure is mapped
    // where the deadline's own promise settles, and that promise is the caller's.
    return withDeadline(work, timeoutMs, (err) => this.#failure(operation, client, timeoutMs, err));
  }

  /** What a failed call rejects with. */
  #failure(operation: string, client: Client, timeoutMs: number, err: unknown): Error {
    // An error reply (WRONGTYPE, a script error) or a malformed call means a bug, not an outage.
    if (err instanceof ErrorReply || err instanceof TypeError) return err;
    if (err instanceof DeadlineExceeded) {
      this.#reset(client);
      return new StoreUnavailable(`redis ${operation}: no reply within ${timeoutMs} ms`, { cause: err });
    }
    return new StoreUnavailable(`redis ${operation} failed: ${errorMessage(err)}`, { cause: err });
  }

  /**
   * A reply that misses its deadline means the connection cannot be trusted (the server is frozen or the
   * peer is gone without a FIN). Swap in a fresh client that reconnects in the background and destroy the
   * stale one, which fails whatever still waits on it; until the fresh one is ready, calls fail at once
   * (offline queue disabled) instead of piling up behind a dead socket.
   */
  #reset(stale: Client): void {
    if (this.#closed || stale !== this.#client) return; // closed, or another call already reset it
    const fresh = makeClient(this.#options);
    this.#client = fresh;
    destroyForGood(stale);
    // A cluster client's connect could stall on a hung node until it thaws: it gets the connect budget.
    const connecting = isCluster(fresh)
      ? connectWithin(fresh, this.#options.connectTimeoutMs ?? 3000, () => !this.#closed && this.#client === fresh)
      : fresh.connect();
    connecting.catch(() => {
      // One primary's client retries by itself until destroyed (the error events already went to onError).
      // A cluster client whose discovery fails (every node refused) or stalls gives up for good: try a fresh
      // one a little later, until one connects or the store is closed.
      if (isCluster(fresh)) setTimeout(() => this.#reset(fresh), RECONNECT_CLUSTER_MS).unref();
    });
  }

  /**
   * The prefix of the money keys: the ledger's, the receipts', the receipt log's and the jobs' (the ledger
   * opens and closes jobs in its scripts, and every settlement sequences a leaf of the one log, so on a
   * cluster they all share this one hash tag, `{pc}:`).
   */
  get keyPrefix(): string {
    return this.#prefix;
  }

  /**
   * The prefix of a family of keys that no script shares with another family (a capability's own keys,
   * or the store's identity keys, `id`). On one primary it is `keyPrefix`, so the layout there is the
   * same as ever; on a cluster it is the family's own hash tag, `{pc:<family>}:`, so each family's scripts
   * stay single-slot while the families spread over the masters. A family's scripts may build further keys
   * from this prefix (listings, indexes): they stay in its slot.
   */
  familyPrefix(family: string): string {
    return this.#cluster && this.#base !== '' ? `{${this.#base}:${family}}:` : this.#prefix;
  }

  /**
   * The prefix of one principal's keys of a family whose every script touches one principal only (TOTP): on
   * a cluster, `{pc:<family>:<principal id>}:`, so principals spread over every slot. The tag ends at the
   * first `}`, which an id may contain: still the same slot for all of that principal's keys, since they
   * share the whole prefix.
   */
  principalPrefix(family: string, principalId: string): string {
    return this.#cluster && this.#base !== '' ? `{${this.#base}:${family}:${principalId}}:` : this.#prefix;
  }

  /**
   * Every key matching a glob, master by master on a cluster: for an operator's whole-store maintenance
   * (a data-key rewrap), never on a request's path. Each SCAN page is one call under the bulk deadline.
   */
  async *scanKeys(match: string): AsyncGenerator<string> {
    const client = this.#client;
    const nodes = isCluster(client) ? client.masters.map((m) => client.nodeClient(m)) : [client];
    for (const node of nodes) {
      let cursor = '0';
      do {
        const page = await this.#call('scan', async () => (await node).scan(cursor, { MATCH: match, COUNT: 500 }), this.#bulkTimeoutMs);
        cursor = String(page.cursor);
        for (const key of page.keys) yield String(key);
      } while (cursor !== '0');
    }
  }

  /**
   * Runs a Lua script (lua.ts) on this store's connection, under the same deadline and failure mapping as
   * every other call. Sent by SHA; the source follows only after NOSCRIPT. Every script names at least one
   * key (its family's prefix when it names no other), which routes it to its slot's master on a cluster.
   */
  async runScript(operation: string, script: LuaScript, keys: string[], args: string[], timeoutMs = this.#commandTimeoutMs): Promise<unknown> {
    if (keys.length === 0) throw new TypeError(`script ${script.name} names no key`);
    // Both clients take EVALSHA and EVAL alike; node-redis types their replies per client. One primary is sent
    // the command's words as they are, a cluster the named command its client routes (lua.ts).
    return this.#call(
      operation,
      (c) => (isCluster(c) ? evalLua(c as unknown as LuaEvaluator, script, keys, args) : evalLuaRaw(c, script, keys, args)),
      timeoutMs,
    );
  }

  /**
   * Runs one plain command (or a few, none of which must be atomic with another) on this store's
   * connection, under its deadline and failure mapping. On a cluster the client sends it to the master of
   * its key's slot.
   */
  command<T>(operation: string, run: (client: Client) => Promise<T>, timeoutMs = this.#commandTimeoutMs): Promise<T> {
    return this.#call(operation, run, timeoutMs);
  }

  createPrincipal(principal: PrincipalRecord): Promise<void> {
    return this.#identity.createPrincipal(principal);
  }

  getPrincipal(id: string): Promise<PrincipalRecord | null> {
    return this.#identityCache ? this.#identityCache.getPrincipal(id) : this.#identity.getPrincipal(id);
  }

  setRung(id: string, rung: RungGrant, aup: AupConsent | null): Promise<PrincipalRecord | null> {
    return this.#identity.setRung(id, rung, aup);
  }

  putScope(id: string, scope: ScopeGrant): Promise<PrincipalRecord | null> {
    return this.#identity.putScope(id, scope);
  }

  putToken(token: TokenRecord): Promise<void> {
    return this.#identity.putToken(token);
  }

  identify(tokenHash: string): Promise<Identity | null> {
    return this.#identityCache ? this.#identityCache.identify(tokenHash) : this.#identity.identify(tokenHash);
  }

  /** Identity replies cached in this process now (0 with the cache off). */
  get identityCacheSize(): number {
    return this.#identityCache?.size ?? 0;
  }

  listPrincipals(cursor: string | null, limit: number): Promise<{ ids: string[]; next: string | null }> {
    return this.#identity.listPrincipals(cursor, limit, this.#bulkTimeoutMs);
  }

  listTokens(principalId: string): Promise<TokenRecord[]> {
    return this.#identity.listTokens(principalId);
  }

  revokeToken(tokenId: string, at: string): Promise<TokenRecord | null> {
    return this.#identity.revokeToken(tokenId, at);
  }

  revokeLegacyTokens(at: string): Promise<number> {
    return this.#identity.revokeLegacyTokens(at, this.#bulkTimeoutMs);
  }

  putReceipt(receipt: Receipt): Promise<void> {
    return this.#receipts.put(receipt);
  }

  listReceipts(principalId: string, day: string): Promise<Receipt[]> {
    return this.#receipts.list(principalId, day);
  }

  getReceipt(id: string): Promise<Receipt | null> {
    return this.#receipts.get(id);
  }

  async ping(): Promise<void> {
    // On a cluster, the master of the deployment's slot: the node every call of this store goes to. And the
    // identity cache's connection, which every identify needs: the store answers when both do.
    await Promise.all([
      this.#call<unknown>('ping', (c) => (isCluster(c) ? c.sendCommand(this.#prefix, true, ['PING']) : c.ping())),
      this.#identityCache?.ping(),
    ]);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#replicaTimer);
    await this.#identityCache?.close();
    await closeForGood(this.#client, this.#commandTimeoutMs);
  }
}

/** Pause before a cluster client that could not discover the cluster is replaced by another attempt. */
const RECONNECT_CLUSTER_MS = 500;
