/**
 * The Redis connection of the store: one primary (`createClient`) or a Redis Cluster (`createCluster`),
 * configured to fail closed and never hang (no offline queue, no per-command timer: the store's own
 * deadline bounds every call, reply included), plus the hash-tag rules that keep a family's keys in one
 * cluster slot. The store (redis.ts) owns the client's life: deadlines, replacement, closing.
 */
import { createClient, createCluster } from '@redis/client';
import { StoreRefused, StoreUnavailable } from './errors.js';
import type { LuaScript } from './lua.js';

/** What a node connection needs, whether it is the one primary or one node of a cluster. */
export function nodeOptions(options: RedisStoreOptions) {
  return {
    // Without this, commands issued while disconnected wait (forever) for a reconnect.
    disableOfflineQueue: true,
    // No per-command `timeout` (node-redis 6 defaults it to 5 s; 0 turns it off): it builds an
    // AbortSignal.timeout for every command — a timer, and a DOMException when it fires — about 4 % of a
    // call's CPU, while the store's own deadline (#call) already bounds every call, reply included.
    commandOptions: { timeout: 0 },
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 3000,
      // Retry forever: startup is bounded by the connect deadline in RedisStore.connect, and a running
      // gateway should heal by itself when Redis returns.
      reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000) + Math.floor(Math.random() * 50), // jitter: gateways don't stampede
    },
  };
}

function makeSingle(options: RedisStoreOptions) {
  return createClient({ url: options.url, ...nodeOptions(options) });
}

/**
 * node-redis' cluster client: it learns the slot map from the root nodes, sends each command to the master
 * of its first key's slot, follows MOVED/ASK, and re-learns the map when a node fails (a promoted replica
 * takes over). Node credentials and TLS are the `url`'s, given to every discovered node as `defaults`.
 */
function makeCluster(options: RedisStoreOptions, nodes: string[]) {
  return createCluster(clusterOptions(options, nodes));
}

/** The cluster client's options: the root nodes, and every node's connection options as `defaults`. */
export function clusterOptions(options: RedisStoreOptions, nodes: string[]) {
  const base = options.url ? new URL(options.url) : null;
  const scheme = base?.protocol === 'rediss:' ? 'rediss' : 'redis';
  const auth = base && base.username !== '' ? { username: decodeURIComponent(base.username) } : {};
  const password = base && base.password !== '' ? { password: decodeURIComponent(base.password) } : {};
  const { commandOptions, ...node } = nodeOptions(options);
  return {
    rootNodes: nodes.map((n) => ({ url: `${scheme}://${n}` })),
    defaults: { ...node, ...auth, ...password, ...(scheme === 'rediss' ? { socket: { ...node.socket, tls: true as const } } : {}) },
    // A cluster-level option (node-redis drops it from `defaults`): without it every command gets the
    // 5 s AbortSignal.timeout that nodeOptions turns off for one primary.
    commandOptions,
  };
}

export function makeClient(options: RedisStoreOptions) {
  const client = options.clusterNodes && options.clusterNodes.length > 0 ? makeCluster(options, options.clusterNodes) : makeSingle(options);
  // Without a listener an 'error' event (each failed reconnect) would crash the process.
  client.on('error', (err: Error) => options.onError?.(err));
  return client;
}

/** The store's client: one primary's or a cluster's. Plain commands take the same arguments on either. */
export type Client = ReturnType<typeof makeClient>;
type ClusterClient = ReturnType<typeof makeCluster>;
export const isCluster = (c: Client): c is ClusterClient => 'masters' in c;

/** How long an ended cluster client is watched for node connections that a refresh under way opens after. */
const SWEEP_MS = 30_000;

/**
 * Watches a cluster client that was just closed or destroyed. node-redis carries on with a topology refresh
 * already under way at that moment: once its node answers with the slot map, it opens a connection to every
 * master, and those stay open (retrying forever once their nodes are gone), holding the process up. So for
 * a while after, whatever node connections reappear in the client are destroyed. The watch itself holds
 * nothing open; a single primary's client needs none.
 */
function sweepEnded(client: { destroy(): void }): void {
  if (!('masters' in client)) return;
  const cluster = client as ClusterClient;
  const ends = performance.now() + SWEEP_MS;
  const timer = setInterval(() => {
    if (cluster.masters.some((n) => n.client) || cluster.replicas.some((n) => n.client)) cluster.destroy();
    if (performance.now() >= ends) clearInterval(timer);
  }, 100);
  timer.unref();
}

/** Destroys a client for good: at once, and again if a cluster refresh under way reopens node connections. */
export function destroyForGood(client: { destroy(): void }): void {
  client.destroy();
  sweepEnded(client);
}

/**
 * Closes a client for good: gracefully within `ms` (its replies drained), else dropped, as when Redis is down
 * or frozen; then, as destroyForGood, watched for node connections a cluster refresh under way reopens.
 */
export async function closeForGood(client: { isOpen: boolean; close(): Promise<unknown>; destroy(): void }, ms: number): Promise<void> {
  if (!client.isOpen) return;
  try {
    await withDeadline(client.close(), ms);
  } catch {
    client.destroy();
  }
  sweepEnded(client);
}

/**
 * The money keys' prefix on a cluster: a hash tag, so they all land in one slot (see redis.ts).
 * `pc:` becomes `{pc}:`; a prefix that already holds a `{...}` tag is kept as it is (and then every family
 * shares it: an operator's way to put the whole deployment in one slot).
 */
export function clusterPrefix(prefix: string): string {
  return HASH_TAG.test(prefix) ? prefix : `{${tagBase(prefix)}}:`;
}

/** A `{...}` hash tag in a configured prefix: the operator's own, which puts every key in its one slot. */
export const HASH_TAG = /\{[^}]+\}/;

/** A configured prefix without its trailing ':', what the hash tags made from it are built on. */
export function tagBase(prefix: string): string {
  return prefix.replace(/:$/, '') || 'pc';
}

export class DeadlineExceeded extends Error {}

/** One call waiting under a deadline: its place in its length's list, and how to fail it. */
interface Waiting {
  at: number;
  reject: (err: Error) => void;
  prev: Waiting | null;
  next: Waiting | null;
}

/**
 * The calls waiting under deadlines of one length, oldest first. All deadlines of a length end in the
 * order they began, so one timer, set for the oldest, serves them all: a call that settles leaves the list
 * (O(1)), and the timer, when it fires, fails what is due and is set again for the oldest left. Every store
 * command runs under a deadline (several a chat call); a timer and a `Promise.race` of their own for each
 * was most of what a deadline cost.
 */
class DeadlineList {
  readonly #ms: number;
  #first: Waiting | null = null;
  #last: Waiting | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(ms: number) {
    this.#ms = ms;
  }

  add(reject: (err: Error) => void): Waiting {
    const w: Waiting = { at: performance.now() + this.#ms, reject, prev: this.#last, next: null };
    if (this.#last) this.#last.next = w;
    else this.#first = w;
    this.#last = w;
    this.#timer ??= setTimeout(() => this.#due(), this.#ms);
    return w;
  }

  remove(w: Waiting): void {
    if (w.prev) w.prev.next = w.next;
    else if (this.#first === w) this.#first = w.next;
    else return; // already removed (failed by its deadline)
    if (w.next) w.next.prev = w.prev;
    else this.#last = w.prev;
    w.prev = w.next = null;
    // Nothing left to wait for: no timer keeps the process up.
    if (this.#first === null && this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
  }

  #due(): void {
    this.#timer = null;
    const now = performance.now();
    // A timer may fire up to a millisecond early by this clock: what is due within it is due now.
    while (this.#first && this.#first.at <= now + 1) {
      const w = this.#first;
      this.remove(w);
      w.reject(new DeadlineExceeded(`no answer within ${this.#ms} ms`));
    }
    if (this.#first) this.#timer = setTimeout(() => this.#due(), Math.max(1, Math.ceil(this.#first.at - now)));
  }
}

/** The lists of the lengths in use: a few (the command, bulk and connect deadlines); past that, one list a call. */
const deadlineLists = new Map<number, DeadlineList>();
const MAX_LISTS = 32;

/**
 * Settles like `work`, or rejects with DeadlineExceeded after `ms`; the loser's outcome is ignored. `failed`,
 * when given, says what a failure rejects with instead (either kind): a caller that maps its errors does it
 * here rather than in an async layer of its own around this promise (one promise and a turn fewer a command).
 */
export function withDeadline<T>(work: Promise<T>, ms: number, failed?: (err: unknown) => Error): Promise<T> {
  let deadlines = deadlineLists.get(ms);
  if (!deadlines) {
    deadlines = new DeadlineList(ms);
    if (deadlineLists.size < MAX_LISTS) deadlineLists.set(ms, deadlines);
  }
  const list = deadlines;
  return new Promise<T>((resolve, reject) => {
    const fail = failed ? (err: unknown) => reject(failed(err)) : reject;
    const waiting = list.add(fail);
    work.then(
      (value) => {
        list.remove(waiting);
        resolve(value);
      },
      (err: unknown) => {
        list.remove(waiting);
        fail(err);
      },
    );
  });
}

/**
 * The handshake command a server refused, read from a connection error: `HELLO` (a Redis before 6, or a proxy
 * speaking only RESP2) or `CLIENT TRACKING` (a proxy without it, or `rename-command CLIENT ""`). node-redis
 * reports a refused handshake as an 'error' event and reconnects, forever; the caller fails at once instead.
 */
export function refusedHandshake(err: unknown): 'HELLO 3' | 'CLIENT TRACKING' | null {
  const message = errorMessage(err);
  if (/unknown command .HELLO|NOPROTO/i.test(message)) return 'HELLO 3';
  if (/unknown (command .CLIENT|subcommand .TRACKING)/i.test(message)) return 'CLIENT TRACKING';
  return null;
}

/** Rejects with what `refusedHandshake` finds in the client's next such 'error' event; `stop` unhooks it. */
export function onRefusal(client: { on(e: 'error', l: (err: Error) => void): unknown; off(e: 'error', l: (err: Error) => void): unknown }) {
  let listener: ((err: Error) => void) | undefined;
  const refused = new Promise<never>((_, reject) => {
    listener = (err: Error) => {
      const command = refusedHandshake(err);
      if (command) reject(new HandshakeRefused(command, errorMessage(err)));
    };
    client.on('error', listener);
  });
  refused.catch(() => undefined);
  return { refused, stop: () => client.off('error', listener!) };
}

export class HandshakeRefused extends Error {
  constructor(
    readonly command: 'HELLO 3' | 'CLIENT TRACKING',
    readonly reply: string,
  ) {
    super(`redis refused ${command} (${reply})`);
  }
}

/**
 * A first connect: `client` connects within `budget` ms, or fails closed at once. A handshake the server
 * refuses (`onRefusal`) would otherwise be retried by node-redis until the budget ran out and then look like
 * an outage; it rejects with StoreRefused carrying `refused(err)`, the one line startup prints (exit 78). Any
 * other failure (nothing listening, a frozen server past the budget) rejects with StoreUnavailable carrying
 * `unavailable(why)`. On either, the client is destroyed, and destroyed again when its connect settles.
 */
export async function connectOrRefuse(
  client: { connect(): Promise<unknown>; destroy(): void } & Parameters<typeof onRefusal>[0],
  budget: number,
  message: { refused: (err: HandshakeRefused) => string; unavailable: (why: string) => string },
): Promise<void> {
  const refusal = onRefusal(client);
  const connecting = client.connect();
  try {
    await withDeadline(Promise.race([connecting.then(() => undefined), refusal.refused]), budget);
  } catch (err) {
    destroyForGood(client);
    // A cluster client carries on with a discovery already under way after a destroy, and the node
    // connections it opens then would retry forever: destroyed again once that connect settles, however
    // long it takes (for a single client the second destroy is a no-op).
    connecting.then(
      () => client.destroy(),
      () => client.destroy(),
    );
    if (err instanceof HandshakeRefused) throw new StoreRefused(message.refused(err), { cause: err });
    const why = err instanceof DeadlineExceeded ? `no answer within ${budget} ms` : errorMessage(err);
    throw new StoreUnavailable(message.unavailable(why), { cause: err });
  } finally {
    refusal.stop();
  }
}

/**
 * Connects a replacement cluster client within `ms`. A cluster client's connect waits for every master's
 * handshake, so a hung node (a stopped process whose kernel still accepts connections) would hold it for
 * as long as the node stays frozen. Past the budget the client is destroyed; and since node-redis carries
 * on with a discovery already under way after a destroy (the node connections it then opens would
 * reconnect forever), it is destroyed again once that connect settles, as it is when `wanted` says the
 * client was replaced or the store closed meanwhile.
 */
export function connectWithin(client: { connect(): Promise<unknown>; destroy(): void }, ms: number, wanted: () => boolean): Promise<void> {
  let abandoned = false;
  const connecting = client.connect();
  const settle = () => {
    if (abandoned || !wanted()) destroyForGood(client);
  };
  connecting.then(settle, settle);
  return withDeadline(
    connecting.then(() => undefined),
    ms,
  ).catch((err: unknown) => {
    abandoned = true;
    destroyForGood(client);
    throw err;
  });
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface RedisStoreOptions {
  /** One primary: `redis://[[user][:password]@]host[:port][/db]` or `rediss://...` */
  url?: string;
  /**
   * A Redis Cluster instead: `host:port` of some of its nodes (the client discovers the rest). Credentials
   * and TLS, when needed, come from `url`'s scheme, user and password, applied to every node.
   */
  clusterNodes?: string[];
  /**
   * Prepended to every key so several stores (tests, tenants) can share one server. Default `pc:`. On a
   * cluster it is made a hash tag (`clusterPrefix`) unless it already holds one.
   */
  keyPrefix?: string;
  /** Deadline for one call, reply included; past it the call fails with StoreUnavailable. Default 2000 ms. */
  commandTimeoutMs?: number;
  /** Deadline for bulk calls that touch many keys (revokeLegacyTokens). Default 30000 ms. */
  bulkTimeoutMs?: number;
  /** Budget for the first connection, retries included; past it startup fails. Default 3000 ms. */
  connectTimeoutMs?: number;
  /** Receives connection errors (the client reports each failed reconnect); never sees secrets. */
  onError?: (err: Error) => void;
  /**
   * Replicas that must hold a money write before it is answered (replica-acks.ts): a number, or `auto` (the
   * default): 1 while the money master has a replica online, 0 on a lone primary, looked up every 10 s.
   */
  replicaAcks?: number | 'auto';
  /** How long a money write waits for its replicas. Default 1000 ms. */
  replicaAckTimeoutMs?: number;
  /**
   * Identity replies (tokens, principals) cached in this process with Redis' CLIENT TRACKING on a connection
   * of their own (identity-cache.ts): at most this many, least recently used out first. 0 turns the cache
   * off (every identify is one script on the main connection). Default 50,000.
   */
  identityCacheEntries?: number;
  /**
   * Told when the identity cache's tracking connection is lost (the cache is dropped; identity reads fail
   * closed until it is back) and when it is restored; `reason` is the connection error's message, no secret.
   */
  onIdentityTracking?: (event: 'lost' | 'restored', reason?: string) => void;
  /** Told when replicas did not confirm a money write in time. */
  onReplicaShortfall?: (confirmed: number, wanted: number) => void;
}

/**
 * What the store's parts (identity, receipts) need of the Redis store: run a `.lua` script, or one command,
 * under the store's deadline and fail-closed mapping. RedisStore implements it; naming it here keeps those
 * parts from importing the store that composes them.
 */
export interface RedisRunner {
  runScript(operation: string, script: LuaScript, keys: string[], args: string[], timeoutMs?: number): Promise<unknown>;
  command<T>(operation: string, run: (client: Client) => Promise<T>, timeoutMs?: number): Promise<T>;
}
