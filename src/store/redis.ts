/**
 * The shared store: state in Redis (>= 7.0, for EVALSHA_RO) through the `redis` client, so any number of
 * gateway processes see the same principals, tokens and receipts.
 *
 * Every operation that reads or writes more than one key is one Lua script, so it is atomic (no other
 * client's write lands in the middle: `setRung` and `putScope` cannot lose each other's update) and costs
 * one round trip (`identify` resolves hash -> token -> principal -> scopes -> legacy flag in one EVALSHA).
 * Scripts are sent by SHA and node-redis re-sends the source on NOSCRIPT, so a server restart or SCRIPT
 * FLUSH costs one extra trip, never an error.
 *
 * One primary (`url`) or a Redis Cluster (`clusterNodes`, node-redis' cluster client). A cluster runs a
 * script only when all its keys are in one slot, so keys go in families that no script crosses, each
 * family under its own hash tag on a cluster (on one primary every family is under the plain prefix, the
 * layout it always had):
 *   money     `keyPrefix`, `{pc}:`  the meter, receipts, the receipt log, jobs. One slot: a settlement
 *             charges, stores the receipt and sequences its leaf in the deployment's one receipt log in one
 *             script, and a job's creation and end ride in the meter's scripts — so the log, a global
 *             singleton, pins the money of every principal to one master
 *   identity  `familyPrefix('id')`, `{pc:id}:`  principals and tokens below (identify derives the token and
 *             principal keys from the hash index, inside the family)
 *   others    each capability its own: `{pc:ses}:`, `{pc:pk}:`, ... (familyPrefix), and TOTP by principal,
 *             `{pc:totp:<principal>}:` (principalPrefix)
 * docs/operators.md ("Redis Cluster") says what this spreads, what it does not, and what sharding the money
 * by principal would take.
 *
 * Layout (under a configurable prefix, default `pc:`; identity keys under `familyPrefix('id')`):
 *   p:<id>     hash  doc (principal JSON minus rung/aup/scopes), rung (JSON), aup (JSON)
 *   ps:<id>    hash  scope id -> scope JSON
 *   po:<id>    list  scope ids in approval order (a hash has no order; a re-approval keeps its place)
 *   t:<id>     hash  doc (token JSON minus revokedAt), principal, revokedAt (absent while active)
 *   th:<hash>  string token id, the identify index
 *   pt:<id>    list  token ids of a principal, in creation order
 *   tv1        set   ids of legacy (v1) tokens, so a bulk revocation finds them without a scan
 *   legacy-revoked  string  time of the first bulk legacy revocation
 *   r:<id>     string receipt JSON (with its `logIndex`), written once, with its leaf in the receipt log
 *   log:...    the receipt log (src/receipts/log-lua.ts): leaves sequenced with the receipts, tree, checkpoint
 *   rd:<day>:<principal>  zset  ids of a principal's receipts of one UTC day, scored by createdAt (ms);
 *              written with the receipt in one script (the meter's settlement writes both the same way)
 * The namespaces differ before the id, so no id (principal ids contain ':') can collide with another key.
 *
 * Failure mode (fail closed, never hang): with Redis down, calls reject with `StoreUnavailable` at once
 * (the offline queue is off) while the client reconnects in the background; with Redis frozen or the peer
 * silently gone, a call rejects when its deadline passes and the connection is replaced. Startup fails
 * with `StoreUnavailable` when no connection is ready within the connect budget.
 */
import { createHash } from 'node:crypto';
import { createClient, createCluster, defineScript, ErrorReply, type CommandParser } from 'redis';
import { StoreUnavailable } from './errors.js';
import { ReplicaAcks } from './replica-acks.js';
import { LOG_FN } from '../receipts/log-lua.js';
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
  /** Told when replicas did not confirm a money write in time. */
  onReplicaShortfall?: (confirmed: number, wanted: number) => void;
}

// Lua ------------------------------------------------------------------------------------------------------

/** Reads a principal as {doc, rung, aup, {scope JSON...}} or false; shared by the scripts that return one. */
const READ_PRINCIPAL = `
local function read_principal(pk, psk, pok)
  local f = redis.call('HMGET', pk, 'doc', 'rung', 'aup')
  if not f[1] then return false end
  local ids = redis.call('LRANGE', pok, 0, -1)
  local scopes = {}
  if #ids > 0 then scopes = redis.call('HMGET', psk, unpack(ids)) end
  return {f[1], f[2], f[3], scopes}
end
`;

/** Adds or replaces a scope; a new id goes to the end of the order, a known one keeps its place. */
const PUT_SCOPE_FN = `
local function put_scope(psk, pok, id, json)
  if redis.call('HSET', psk, id, json) == 1 then redis.call('RPUSH', pok, id) end
end
`;

/**
 * Writes a receipt once, sequences it as the next leaf of the receipt log (receipts/log-lua.ts) and lists
 * it under its principal and day — one atomic step, so no receipt exists without its leaf nor a leaf
 * without its receipt. The stored JSON gains `logIndex` (outside the canonical receipt the leaf hash was
 * computed from, receipts/canonical.ts). Shared with the meter's settlement script
 * (src/metering/redis-meter.ts), which stores the receipt in the same write as the money.
 */
export const PUT_RECEIPT_FN = `${LOG_FN}
local function put_receipt(rk, ik, json, id, score, prefix, leaf)
  if redis.call('EXISTS', rk) == 1 then return 0 end
  local i = log_append(prefix, leaf)
  redis.call('SET', rk, string.sub(json, 1, -2) .. ',"logIndex":' .. string.format('%d', i) .. '}')
  redis.call('ZADD', ik, score, id)
  return 1
end
`;

/** The keys of a receipt and of its day's index, under `prefix`, and what is written: its JSON and its leaf hash. */
export function receiptKeys(prefix: string, receipt: Receipt): { receipt: string; index: string; score: string; json: string; leaf: string } {
  // The one hash a receipt costs: RFC 6962's leaf hash of its canonical form (receipts/canonical.ts).
  const { json, leaf } = storableReceipt(receipt);
  return {
    receipt: `${prefix}r:${receipt.id}`,
    index: `${prefix}rd:${receiptDay(receipt)}:${receipt.principalId}`,
    score: String(Date.parse(receipt.createdAt) || 0),
    json,
    leaf: leaf.toString('hex'),
  };
}

const LUA = {
  // KEYS p, ps, po  ARGV doc, rung, aup, [scopeId, scopeJson]...
  createPrincipal: `${PUT_SCOPE_FN}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rung', ARGV[2], 'aup', ARGV[3])
redis.call('DEL', KEYS[2], KEYS[3])
for i = 4, #ARGV, 2 do put_scope(KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1]) end
return 1`,

  // KEYS p, ps, po
  getPrincipal: `${READ_PRINCIPAL}
return read_principal(KEYS[1], KEYS[2], KEYS[3])`,

  // KEYS p, ps, po  ARGV rung, aup ('' keeps the recorded consent)
  setRung: `${READ_PRINCIPAL}
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'rung', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'aup', ARGV[2]) end
return read_principal(KEYS[1], KEYS[2], KEYS[3])`,

  // KEYS p, ps, po  ARGV scopeId, scopeJson
  putScope: `${READ_PRINCIPAL}${PUT_SCOPE_FN}
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
put_scope(KEYS[2], KEYS[3], ARGV[1], ARGV[2])
return read_principal(KEYS[1], KEYS[2], KEYS[3])`,

  // KEYS t, th, pt, tv1  ARGV id, doc, principalId, revokedAt ('' = active), format
  // Returns 1, or 0 on an id clash, -1 on a hash clash.
  putToken: `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'principal', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'revokedAt', ARGV[4]) end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[1])
if ARGV[5] == 'v1' then redis.call('SADD', KEYS[4], ARGV[1]) end
return 1`,

  // KEYS th, legacy-revoked  ARGV prefix
  identify: `${READ_PRINCIPAL}
local id = redis.call('GET', KEYS[1])
if not id then return false end
local t = redis.call('HMGET', ARGV[1] .. 't:' .. id, 'doc', 'principal', 'revokedAt')
if not t[1] then return false end
local p = read_principal(ARGV[1] .. 'p:' .. t[2], ARGV[1] .. 'ps:' .. t[2], ARGV[1] .. 'po:' .. t[2])
if not p then return false end
return {t[1], t[3], redis.call('EXISTS', KEYS[2]), p}`,

  // KEYS pt  ARGV prefix
  listTokens: `
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local t = redis.call('HMGET', ARGV[1] .. 't:' .. id, 'doc', 'revokedAt')
  if t[1] then out[#out + 1] = t end
end
return out`,

  // KEYS t  ARGV at. HSETNX: the first revocation's time stands, a second revoke changes nothing.
  revokeToken: `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSETNX', KEYS[1], 'revokedAt', ARGV[1])
return redis.call('HMGET', KEYS[1], 'doc', 'revokedAt')`,

  // KEYS r, rd  ARGV json, id, score, prefix, leaf hash (hex)
  putReceipt: `${PUT_RECEIPT_FN}
return put_receipt(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])`,

  // KEYS rd  ARGV prefix
  listReceipts: `
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local r = redis.call('GET', ARGV[1] .. 'r:' .. id)
  if r then out[#out + 1] = r end
end
return out`,

  // KEYS tv1, legacy-revoked  ARGV prefix, at. O(v1 tokens) once, inside one script: no token slips through.
  revokeLegacy: `
local n = 0
for _, id in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local tk = ARGV[1] .. 't:' .. id
  if redis.call('EXISTS', tk) == 1 and redis.call('HSETNX', tk, 'revokedAt', ARGV[2]) == 1 then n = n + 1 end
end
redis.call('SET', KEYS[2], ARGV[2], 'NX')
return n`,
} as const;

function script<const K extends number>(lua: string, numberOfKeys: K, readOnly = false) {
  return defineScript({
    SCRIPT: lua,
    NUMBER_OF_KEYS: numberOfKeys,
    IS_READ_ONLY: readOnly,
    parseCommand(parser: CommandParser, keys: string[], args: string[]) {
      for (const key of keys) parser.pushKey(key);
      parser.push(...args);
    },
    // Replies are decoded below, against the layout above; node-redis' reply typing has nothing to add.
    transformReply: (reply: unknown): Reply => reply,
  });
}

/** What a script returns, before decoding: nested arrays of strings, integers and nulls. */
type Reply = unknown;

/** A Lua script run through `RedisStore.runScript`. */
export interface LuaScript {
  source: string;
  sha1: string;
}

export function luaScript(source: string): LuaScript {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

const chains = new Map<string, LuaScript>();

/**
 * Two scripts run as one: `first`, then — only when it answers `{'ok', ...}` — `second`, in one EVAL: one
 * atomic step, one round trip, one AOF entry (with `appendfsync always`, one fsync). Each source runs
 * unchanged as a Lua function of its own KEYS and ARGV (parameters shadow the globals); `second` also sees
 * first's reply as FIRST. The reply is `{first's reply, second's reply or nil}`, or first's error reply as
 * it is. Pass the keys and arguments through `chainedCall`. Composites are made once per pair.
 */
export function chainScripts(first: LuaScript, second: LuaScript): LuaScript {
  const id = `${first.sha1}+${second.sha1}`;
  let chained = chains.get(id);
  if (!chained) {
    chained = luaScript(`local function first(KEYS, ARGV)
${first.source}
end
local function second(KEYS, ARGV, FIRST)
${second.source}
end
local nk, na = tonumber(ARGV[1]), tonumber(ARGV[2])
local k1, a1, k2, a2 = {}, {}, {}, {}
for i = 1, #KEYS do if i <= nk then k1[#k1 + 1] = KEYS[i] else k2[#k2 + 1] = KEYS[i] end end
for i = 3, #ARGV do if i - 2 <= na then a1[#a1 + 1] = ARGV[i] else a2[#a2 + 1] = ARGV[i] end end
local r = first(k1, a1)
if type(r) == 'table' and r.err then return r end
if type(r) == 'table' and r[1] == 'ok' then return {r, second(k2, a2, r)} end
return {r, false}`);
    chains.set(id, chained);
  }
  return chained;
}
/** The keys and arguments of a `chainScripts` composite: each script's own, in order. */
export function chainedCall(first: { keys: string[]; args: string[] }, second: { keys: string[]; args: string[] }): { keys: string[]; args: string[] } {
  return {
    keys: [...first.keys, ...second.keys],
    args: [String(first.keys.length), String(first.args.length), ...first.args, ...second.args],
  };
}

const SCRIPTS = {
  pcCreatePrincipal: script(LUA.createPrincipal, 3),
  pcGetPrincipal: script(LUA.getPrincipal, 3, true),
  pcSetRung: script(LUA.setRung, 3),
  pcPutScope: script(LUA.putScope, 3),
  pcPutToken: script(LUA.putToken, 4),
  pcIdentify: script(LUA.identify, 2, true),
  pcListTokens: script(LUA.listTokens, 1, true),
  pcRevokeToken: script(LUA.revokeToken, 1),
  pcRevokeLegacy: script(LUA.revokeLegacy, 2),
  pcPutReceipt: script(LUA.putReceipt, 2),
  pcListReceipts: script(LUA.listReceipts, 1, true),
};

/** What a node connection needs, whether it is the one primary or one node of a cluster. */
function nodeOptions(options: RedisStoreOptions) {
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
      reconnectStrategy: (retries: number) =>
        Math.min(50 * 2 ** retries, 1000) + Math.floor(Math.random() * 50), // jitter: gateways don't stampede
    },
  };
}

function makeSingle(options: RedisStoreOptions) {
  return createClient({ url: options.url, ...nodeOptions(options), scripts: SCRIPTS });
}

/**
 * node-redis' cluster client: it learns the slot map from the root nodes, sends each command to the master
 * of its first key's slot, follows MOVED/ASK, and re-learns the map when a node fails (a promoted replica
 * takes over). Node credentials and TLS are the `url`'s, given to every discovered node as `defaults`.
 */
function makeCluster(options: RedisStoreOptions, nodes: string[]) {
  const base = options.url ? new URL(options.url) : null;
  const scheme = base?.protocol === 'rediss:' ? 'rediss' : 'redis';
  const auth = base && base.username !== '' ? { username: decodeURIComponent(base.username) } : {};
  const password = base && base.password !== '' ? { password: decodeURIComponent(base.password) } : {};
  const { commandOptions, ...node } = nodeOptions(options);
  return createCluster({
    rootNodes: nodes.map((n) => ({ url: `${scheme}://${n}` })),
    defaults: { ...node, ...auth, ...password, ...(scheme === 'rediss' ? { socket: { ...node.socket, tls: true as const } } : {}) },
    // A cluster-level option (node-redis drops it from `defaults`): without it every command gets the
    // 5 s AbortSignal.timeout that nodeOptions turns off for one primary.
    commandOptions,
    scripts: SCRIPTS,
  });
}

function makeClient(options: RedisStoreOptions) {
  const client = options.clusterNodes && options.clusterNodes.length > 0 ? makeCluster(options, options.clusterNodes) : makeSingle(options);
  // Without a listener an 'error' event (each failed reconnect) would crash the process.
  client.on('error', (err: Error) => options.onError?.(err));
  return client;
}

/**
 * The money keys' prefix on a cluster: a hash tag, so they all land in one slot (see the module comment).
 * `pc:` becomes `{pc}:`; a prefix that already holds a `{...}` tag is kept as it is (and then every family
 * shares it: an operator's way to put the whole deployment in one slot).
 */
export function clusterPrefix(prefix: string): string {
  return HASH_TAG.test(prefix) ? prefix : `{${tagBase(prefix)}}:`;
}

/** A `{...}` hash tag in a configured prefix: the operator's own, which puts every key in its one slot. */
const HASH_TAG = /\{[^}]+\}/;

/** A configured prefix without its trailing ':', what the hash tags made from it are built on. */
function tagBase(prefix: string): string {
  return prefix.replace(/:$/, '') || 'pc';
}

type Client = ReturnType<typeof makeClient>;
type ClusterClient = ReturnType<typeof makeCluster>;
const isCluster = (c: Client): c is ClusterClient => 'masters' in c;

// Decoding -------------------------------------------------------------------------------------------------

function asArray(reply: Reply): Reply[] {
  if (!Array.isArray(reply)) throw new TypeError(`unexpected store reply: ${typeof reply}`);
  return reply;
}

function asString(reply: Reply): string {
  if (typeof reply !== 'string') throw new TypeError(`unexpected store reply: ${typeof reply}`);
  return reply;
}

function parseJson<T>(reply: Reply): T {
  return JSON.parse(asString(reply)) as T;
}

function decodePrincipal(reply: Reply): PrincipalRecord | null {
  if (reply === null) return null;
  const [doc, rung, aup, scopes] = asArray(reply);
  return {
    ...parseJson<Omit<PrincipalRecord, 'rung' | 'aup' | 'scopes'>>(doc),
    rung: parseJson<RungGrant | null>(rung),
    aup: parseJson<AupConsent | null>(aup),
    // A null here would be an order entry without a scope, which the scripts never write.
    scopes: asArray(scopes).filter((s) => s !== null).map((s) => parseJson<ScopeGrant>(s)),
  };
}

function decodeToken(doc: Reply, revokedAt: Reply): TokenRecord {
  return {
    ...parseJson<Omit<TokenRecord, 'revokedAt'>>(doc),
    revokedAt: revokedAt === null ? null : asString(revokedAt),
  };
}

function principalDoc(principal: PrincipalRecord): string {
  const { rung: _rung, aup: _aup, scopes: _scopes, ...doc } = principal;
  return JSON.stringify(doc);
}

// The store ------------------------------------------------------------------------------------------------

export class RedisStore implements Store {
  readonly kind = 'redis' as const;

  /** Replaced (never repaired) when a reply misses its deadline; see #reset. */
  #client: Client;
  #closed = false;
  readonly #prefix: string;
  /** The identity keys' prefix (principals, tokens): `familyPrefix('id')`. */
  readonly #idPrefix: string;
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
    this.#idPrefix = this.familyPrefix('id');
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
    const budget = options.connectTimeoutMs ?? 3000;
    // The cluster client's own rejection only says no root node would do; the reason (refused, "cluster
    // support disabled", a bad password) came as an 'error' event, so the startup error carries the last one.
    // Set by the listener below; typed wide so the check after the catch is not narrowed to its first value.
    let lastError = null as string | null;
    const remember = (err: Error): void => {
      lastError = errorMessage(err);
    };
    client.on('error', remember);
    try {
      await withDeadline(client.connect().then(() => undefined), budget);
    } catch (err) {
      client.destroy();
      const why = err instanceof DeadlineExceeded ? `no answer within ${budget} ms` : errorMessage(err);
      const reason = lastError !== null && lastError !== why ? ` (${lastError})` : '';
      throw new StoreUnavailable(`cannot reach redis: ${why}${reason}`, { cause: err });
    } finally {
      client.off('error', remember);
    }
    const store = new RedisStore(client, options);
    if ((options.replicaAcks ?? 'auto') === 'auto') {
      await store.#lookForReplicas().catch(() => undefined);
      store.#replicaTimer = setInterval(() => void store.#lookForReplicas().catch(() => undefined), 10_000).unref();
    }
    return store;
  }

  #key(namespace: string, id: string): string {
    return `${this.#idPrefix}${namespace}:${id}`;
  }

  #principalKeys(id: string): string[] {
    return [this.#key('p', id), this.#key('ps', id), this.#key('po', id)];
  }

  /**
   * Runs one call under a deadline that includes the reply, and maps "could not ask Redis" to
   * StoreUnavailable; a Redis error reply is a bug and stays what it is. node-redis' own command timeout
   * stops counting once the command is written (https://github.com/redis/node-redis/pull/3008), so a
   * frozen server or a half-open connection would otherwise hang the call for as long as TCP takes to
   * notice.
   */
  async #call<T>(
    operation: string,
    run: (client: Client) => Promise<T>,
    timeoutMs = this.#commandTimeoutMs,
  ): Promise<T> {
    const client = this.#client;
    try {
      return await withDeadline(run(client), timeoutMs);
    } catch (err) {
      // An error reply (WRONGTYPE, a script error) or a malformed call means a bug, not an outage.
      if (err instanceof ErrorReply || err instanceof TypeError) throw err;
      if (err instanceof DeadlineExceeded) {
        this.#reset(client);
        throw new StoreUnavailable(`redis ${operation}: no reply within ${timeoutMs} ms`, { cause: err });
      }
      throw new StoreUnavailable(`redis ${operation} failed: ${errorMessage(err)}`, { cause: err });
    }
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
    stale.destroy();
    fresh.connect().catch(() => {
      // One primary's client retries by itself until destroyed (the error events already went to onError).
      // A cluster client whose first discovery fails (every node refused) gives up for good: try a fresh
      // one a little later, until one connects or the store is closed.
      if (isCluster(fresh)) setTimeout(() => this.#reset(fresh), RECONNECT_CLUSTER_MS).unref();
    });
  }

  /**
   * The prefix of the money keys: the meter's, the receipts', the receipt log's and the jobs' (their scripts
   * run as riders of the meter's, and every settlement sequences a leaf of the one log, so on a cluster they
   * all share this one hash tag, `{pc}:`).
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
   * Runs a Lua script of another capability (jobs) on this store's connection, under the same deadline and
   * failure mapping as the store's own calls. Sent by SHA; the source follows only after NOSCRIPT.
   */
  async runScript(operation: string, script: LuaScript, scriptKeys: string[], args: string[]): Promise<Reply> {
    // A script that names no key (it builds its keys from the prefix) still has to reach the master of the
    // money keys' slot on a cluster: the prefix itself, as an unused KEYS[1], routes it there. (Only money
    // scripts are keyless; a family's script names at least one of its keys.)
    const keys = this.#cluster && scriptKeys.length === 0 ? [this.#prefix] : scriptKeys;
    return this.#call(operation, async (c) => {
      try {
        return (await c.evalSha(script.sha1, { keys, arguments: args }));
      } catch (err) {
        if (err instanceof ErrorReply && err.message.startsWith('NOSCRIPT')) {
          return (await c.eval(script.source, { keys, arguments: args }));
        }
        throw err;
      }
    });
  }

  async createPrincipal(principal: PrincipalRecord): Promise<void> {
    const args = [principalDoc(principal), JSON.stringify(principal.rung), JSON.stringify(principal.aup)];
    for (const scope of principal.scopes) args.push(scope.id, JSON.stringify(scope));
    const keys = this.#principalKeys(principal.id);
    const created = await this.#call('createPrincipal', (c) => c.pcCreatePrincipal(keys, args));
    if (created !== 1) throw new StoreConflict(`principal ${principal.id}`);
  }

  async getPrincipal(id: string): Promise<PrincipalRecord | null> {
    const reply = await this.#call('getPrincipal', (c) => c.pcGetPrincipal(this.#principalKeys(id), []));
    return decodePrincipal(reply);
  }

  async setRung(id: string, rung: RungGrant, aup: AupConsent | null): Promise<PrincipalRecord | null> {
    const args = [JSON.stringify(rung), aup === null ? '' : JSON.stringify(aup)];
    const reply = await this.#call('setRung', (c) => c.pcSetRung(this.#principalKeys(id), args));
    return decodePrincipal(reply);
  }

  async putScope(id: string, scope: ScopeGrant): Promise<PrincipalRecord | null> {
    const args = [scope.id, JSON.stringify(scope)];
    const reply = await this.#call('putScope', (c) => c.pcPutScope(this.#principalKeys(id), args));
    return decodePrincipal(reply);
  }

  async putToken(token: TokenRecord): Promise<void> {
    const { revokedAt, ...doc } = token;
    const keys = [
      this.#key('t', token.id),
      this.#key('th', token.hash),
      this.#key('pt', token.principalId),
      `${this.#idPrefix}tv1`,
    ];
    const args = [token.id, JSON.stringify(doc), token.principalId, revokedAt ?? '', token.format];
    const stored = await this.#call('putToken', (c) => c.pcPutToken(keys, args));
    if (stored === 0) throw new StoreConflict(`token ${token.id}`);
    if (stored !== 1) throw new StoreConflict('token with this hash');
  }

  async identify(tokenHash: string): Promise<Identity | null> {
    const keys = [this.#key('th', tokenHash), `${this.#idPrefix}legacy-revoked`];
    const reply = await this.#call('identify', (c) => c.pcIdentify(keys, [this.#idPrefix]));
    if (reply === null) return null;
    const [doc, revokedAt, legacyRevoked, principal] = asArray(reply);
    const decoded = decodePrincipal(principal ?? null);
    if (decoded === null) return null;
    return { token: decodeToken(doc, revokedAt), principal: decoded, legacyRevoked: legacyRevoked === 1 };
  }

  async listPrincipals(cursor: string | null, limit: number): Promise<{ ids: string[]; next: string | null }> {
    // SCAN over the principal hashes (`p:<id>`); the cursor is Redis's. On a cluster the identity keys share
    // one hash tag, so they all live on the master of that slot: scan that node.
    const prefix = this.#key('p', '');
    const match = `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
    return this.#call('listPrincipals', async (c) => {
      const node = isCluster(c) ? await c.getNodeClientForKey(prefix) : c;
      let at = cursor ?? '0';
      const ids: string[] = [];
      do {
        const reply = await node.scan(at, { MATCH: match, COUNT: Math.max(limit, 10) });
        at = String(reply.cursor);
        for (const key of reply.keys) ids.push(String(key).slice(prefix.length));
      } while (at !== '0' && ids.length < limit);
      return { ids: ids.sort(), next: at === '0' ? null : at };
    }, this.#bulkTimeoutMs);
  }

  async listTokens(principalId: string): Promise<TokenRecord[]> {
    const keys = [this.#key('pt', principalId)];
    const reply = await this.#call('listTokens', (c) => c.pcListTokens(keys, [this.#idPrefix]));
    return asArray(reply).map((pair) => {
      const [doc, revokedAt] = asArray(pair);
      return decodeToken(doc, revokedAt);
    });
  }

  async revokeToken(tokenId: string, at: string): Promise<TokenRecord | null> {
    const reply = await this.#call('revokeToken', (c) => c.pcRevokeToken([this.#key('t', tokenId)], [at]));
    if (reply === null) return null;
    const [doc, revokedAt] = asArray(reply);
    return decodeToken(doc, revokedAt);
  }

  async revokeLegacyTokens(at: string): Promise<number> {
    const keys = [`${this.#idPrefix}tv1`, `${this.#idPrefix}legacy-revoked`];
    const args = [this.#idPrefix, at];
    const count = await this.#call('revokeLegacyTokens', (c) => c.pcRevokeLegacy(keys, args), this.#bulkTimeoutMs);
    if (typeof count !== 'number') throw new TypeError(`unexpected store reply: ${typeof count}`);
    return count;
  }

  async putReceipt(receipt: Receipt): Promise<void> {
    const k = receiptKeys(this.#prefix, receipt);
    // Once: a retried write must neither overwrite the receipt already handed out nor sequence a second leaf.
    await this.#call('putReceipt', (c) => c.pcPutReceipt([k.receipt, k.index], [k.json, receipt.id, k.score, this.#prefix, k.leaf]));
  }

  async listReceipts(principalId: string, day: string): Promise<Receipt[]> {
    const key = `${this.#prefix}rd:${day}:${principalId}`;
    const reply = await this.#call('listReceipts', (c) => c.pcListReceipts([key], [this.#prefix]));
    return asArray(reply).filter((r) => r !== null).map((r) => parseJson<Receipt>(r));
  }

  async getReceipt(id: string): Promise<Receipt | null> {
    const reply = await this.#call('getReceipt', (c) => c.get(`${this.#prefix}r:${id}`));
    return reply === null ? null : parseJson<Receipt>(reply);
  }

  async ping(): Promise<void> {
    // On a cluster, the master of the deployment's slot: the node every call of this store goes to.
    await this.#call<unknown>('ping', (c) => (isCluster(c) ? c.sendCommand(this.#prefix, true, ['PING']) : c.ping()));
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#replicaTimer);
    const client = this.#client;
    if (!client.isOpen) return;
    try {
      await withDeadline(client.close(), this.#commandTimeoutMs);
    } catch {
      // Closing while Redis is down or frozen: drop the socket instead of waiting for an answer.
      client.destroy();
    }
  }
}

/** Pause before a cluster client that could not discover the cluster is replaced by another attempt. */
const RECONNECT_CLUSTER_MS = 500;

class DeadlineExceeded extends Error {}

/** Settles like `work`, or rejects with DeadlineExceeded after `ms`; the loser's outcome is ignored. */
async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
