/**
 * The receipt log in Redis, on the store's connection and under its money prefix. Leaves are sequenced by
 * the receipt write (lua/receipt.lib.lua, also run inside the meter's settlement); these scripts serve the
 * signer and the proofs, each one round trip: a proof reads its O(log n) nodes in one script.
 *
 * Layout, under the money prefix (lua/log.lib.lua is the one place the scripts read it):
 *   log:size              string  leaves sequenced so far (INCR: the next index)
 *   log:h:<level>:<chunk> string  hashes of the complete subtrees of one level, 64 hex digits each, node
 *                                 `index` at offset (index mod 256) * 64 of chunk floor(index / 256);
 *                                 level 0 holds the leaf hashes. Written once, never changed. A chunk is
 *                                 made at its full 16 KiB (zero bytes until written) when its first hash
 *                                 lands: grown piece by piece, Redis would keep up to twice that allocated.
 *   log:cp                hash    size, note: the latest signed checkpoint
 *   log:lease             string  the signing lease's owner (PX: it lapses unless renewed)
 * Hex, not raw bytes: replies stay plain strings for the client, for 32 more bytes per hash.
 */
import type { NodeId } from './merkle.js';
import type { AdvanceResult, Pending, ReceiptLog, StoredCheckpoint, StoredNode } from './log.js';
import { loadLua } from '../store/lua.js';
import type { RedisStore } from '../store/redis.js';

const LEASE = loadLua(import.meta.url, 'lua/lease.lua');
const UNLEASE = loadLua(import.meta.url, 'lua/unlease.lua');
const PENDING = loadLua(import.meta.url, 'lua/log.lib.lua', 'lua/pending.lua');
const ADVANCE = loadLua(import.meta.url, 'lua/log.lib.lua', 'lua/advance.lua');
const NODES = loadLua(import.meta.url, 'lua/log.lib.lua', 'lua/nodes.lua');

/** 64 hex digits a hash, concatenated, back into hashes. */
function hashes(hex: unknown): Buffer[] {
  const s = typeof hex === 'string' ? hex : '';
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
      [`${this.#prefix}log:size`, `${this.#prefix}log:cp`, this.#prefix],
      [String(max)],
    )) as [number, string | null, string | null, string, string];
    return {
      size: Number(n),
      checkpoint: size === null || note === null ? null : { size: Number(size), note },
      leaves: hashes(leaves),
      frontier: hashes(frontier),
    };
  }

  async advance(owner: string, fromSize: number, toSize: number, nodes: StoredNode[], note: string): Promise<AdvanceResult> {
    const args = [owner, String(fromSize), String(toSize), note];
    for (const n of nodes) args.push(String(n.id.level), String(n.id.index), n.hash.toString('hex'));
    const reply = await this.#store.runScript('log.advance', ADVANCE, [`${this.#prefix}log:lease`, `${this.#prefix}log:cp`, this.#prefix], args);
    if (reply !== 'ok' && reply !== 'lost' && reply !== 'stale') throw new TypeError(`unexpected log reply: ${String(reply)}`);
    return reply;
  }

  async checkpoint(): Promise<StoredCheckpoint | null> {
    const [size, note] = await this.#store.command('log.checkpoint', (c) => c.hmGet(`${this.#prefix}log:cp`, ['size', 'note']));
    return size == null || note == null ? null : { size: Number(size), note: String(note) };
  }

  async nodes(ids: NodeId[]): Promise<Buffer[]> {
    if (ids.length === 0) return [];
    const args: string[] = [];
    for (const id of ids) args.push(String(id.level), String(id.index));
    return hashes(await this.#store.runScript('log.nodes', NODES, [this.#prefix], args));
  }
}
