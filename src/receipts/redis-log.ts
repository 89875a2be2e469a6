/**
 * The receipt log in Redis, on the store's connection and under its prefix (layout: log-lua.ts). Leaves
 * are sequenced by the store's receipt write; these scripts serve the signer and the proofs, each one
 * round trip: a proof reads its O(log n) nodes in one script.
 */
import type { NodeId } from './merkle.js';
import type { AdvanceResult, Pending, ReceiptLog, StoredCheckpoint, StoredNode } from './log.js';
import { LOG_FN } from './log-lua.js';
import { luaScript, type RedisStore } from '../store/redis.js';

// KEYS lease  ARGV owner, ms
const LEASE = luaScript(`
local cur = redis.call('GET', KEYS[1])
if cur == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0`);

// KEYS lease  ARGV owner
const UNLEASE = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`);

// KEYS size, cp  ARGV prefix, max. Leaves from the checkpoint's size on, and the checkpoint's frontier.
const PENDING = luaScript(`${LOG_FN}
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local cp = redis.call('HMGET', KEYS[2], 'size', 'note')
local s = tonumber(cp[1] or '0')
local to = math.min(n, s + tonumber(ARGV[2]))
local leaves = {}
for i = s, to - 1 do leaves[#leaves + 1] = assert(log_get(ARGV[1], 0, i), 'log leaf missing') end
local frontier, start = {}, 0
for level = 52, 0, -1 do
  local w = 2 ^ level
  if start + w <= s then
    frontier[#frontier + 1] = assert(log_get(ARGV[1], level, start / w), 'log node missing')
    start = start + w
  end
end
return {n, cp[1] or false, cp[2] or false, table.concat(leaves), table.concat(frontier)}`);

// KEYS lease, cp  ARGV prefix, owner, fromSize (-1: none), toSize, note, [level, index, hex]...
const ADVANCE = luaScript(`${LOG_FN}
if redis.call('GET', KEYS[1]) ~= ARGV[2] then return 'lost' end
local cur = tonumber(redis.call('HGET', KEYS[2], 'size') or '-1')
if cur ~= tonumber(ARGV[3]) then return 'stale' end
for i = 6, #ARGV, 3 do log_put(ARGV[1], tonumber(ARGV[i]), tonumber(ARGV[i + 1]), ARGV[i + 2]) end
redis.call('HSET', KEYS[2], 'size', ARGV[4], 'note', ARGV[5])
return 'ok'`);

// KEYS -  ARGV prefix, [level, index]...
const NODES = luaScript(`${LOG_FN}
local out = {}
for i = 2, #ARGV, 2 do
  local h = log_get(ARGV[1], tonumber(ARGV[i]), tonumber(ARGV[i + 1]))
  if not h then return redis.error_reply('log node ' .. ARGV[i] .. '/' .. ARGV[i + 1] .. ' is not stored') end
  out[#out + 1] = h
end
return table.concat(out)`);

// KEYS cp
const CHECKPOINT = luaScript(`return redis.call('HMGET', KEYS[1], 'size', 'note')`);

/** 64 hex digits a hash, concatenated, back into hashes. */
function hashes(hex: string | null): Buffer[] {
  const s = hex ?? '';
  const out: Buffer[] = [];
  for (let i = 0; i < s.length; i += 64) out.push(Buffer.from(s.slice(i, i + 64), 'hex'));
  return out;
}

export class RedisReceiptLog implements ReceiptLog {
  readonly kind = 'redis' as const;
  readonly #store: RedisStore;
  readonly #prefix: string;

  constructor(store: RedisStore) {
    this.#store = store;
    this.#prefix = store.keyPrefix;
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    return (await this.#store.runScript('log.lease', LEASE, [`${this.#prefix}log:lease`], [owner, String(ms)])) === 1;
  }

  async unlease(owner: string): Promise<void> {
    await this.#store.runScript('log.unlease', UNLEASE, [`${this.#prefix}log:lease`], [owner]);
  }

  async pending(max: number): Promise<Pending> {
    const [n, size, note, leaves, frontier] = (await this.#store.runScript(
      'log.pending',
      PENDING,
      [`${this.#prefix}log:size`, `${this.#prefix}log:cp`],
      [this.#prefix, String(max)],
    )) as [number, string | null, string | null, string, string];
    return {
      size: Number(n),
      checkpoint: size === null || note === null ? null : { size: Number(size), note },
      leaves: hashes(leaves),
      frontier: hashes(frontier),
    };
  }

  async advance(owner: string, fromSize: number, toSize: number, nodes: StoredNode[], note: string): Promise<AdvanceResult> {
    const args = [this.#prefix, owner, String(fromSize), String(toSize), note];
    for (const n of nodes) args.push(String(n.id.level), String(n.id.index), n.hash.toString('hex'));
    const reply = await this.#store.runScript('log.advance', ADVANCE, [`${this.#prefix}log:lease`, `${this.#prefix}log:cp`], args);
    if (reply !== 'ok' && reply !== 'lost' && reply !== 'stale') throw new TypeError(`unexpected log reply: ${String(reply)}`);
    return reply;
  }

  async checkpoint(): Promise<StoredCheckpoint | null> {
    const [size, note] = (await this.#store.runScript('log.checkpoint', CHECKPOINT, [`${this.#prefix}log:cp`], [])) as [string | null, string | null];
    return size === null || note === null ? null : { size: Number(size), note };
  }

  async nodes(ids: NodeId[]): Promise<Buffer[]> {
    if (ids.length === 0) return [];
    const args = [this.#prefix];
    for (const id of ids) args.push(String(id.level), String(id.index));
    return hashes((await this.#store.runScript('log.nodes', NODES, [], args)) as string | null);
  }
}
