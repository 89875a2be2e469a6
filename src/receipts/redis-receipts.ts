/**
 * Receipts in Redis, under the store's money prefix: the receipts themselves and their day index. The
 * store's `putReceipt`, `listReceipts` and `getReceipt` (store/redis.ts) run here; the meter's settlement
 * writes a receipt with the same Lua (lua/receipt.lib.lua), in the same script as the money.
 *
 * Layout (under the money prefix):
 *   r:<id>                 string receipt JSON (with its `logIndex`), written once, with its leaf in the
 *                                 receipt log (redis-log.ts)
 *   rd:<day>:<principal>   zset   ids of a principal's receipts of one UTC day, scored by createdAt (ms)
 */
import { storableReceipt } from './canonical.js';
import { loadLua, loadReadOnlyLua } from '../store/lua.js';
import { receiptDay, type Receipt } from '../store/store.js';
import type { RedisRunner } from '../store/connection.js';

/** The library files the receipt write needs before it: the log's layout and `put_receipt`. */
export const RECEIPT_LIBS = ['../receipts/lua/log.lib.lua', '../receipts/lua/receipt.lib.lua'] as const;

const PUT = loadLua(import.meta.url, 'lua/log.lib.lua', 'lua/receipt.lib.lua', 'lua/put-receipt.lua');
const LIST = loadReadOnlyLua(import.meta.url, 'lua/list-receipts.lua');

/** The keys of a receipt and of its day's index, under `prefix`, and what is written: its JSON and its leaf hash. */
export function receiptKeys(prefix: string, receipt: Receipt): { receipt: string; index: string; score: string; json: string; leaf: string } {
  // The one hash a receipt costs: RFC 6962's leaf hash of its canonical form (canonical.ts).
  const { json, leaf } = storableReceipt(receipt);
  return {
    receipt: `${prefix}r:${receipt.id}`,
    index: `${prefix}rd:${receiptDay(receipt)}:${receipt.principalId}`,
    score: String(Date.parse(receipt.createdAt) || 0),
    json,
    leaf: leaf.toString('hex'),
  };
}

/** What the receipts need of the store: its scripts and commands, under its deadline and failure mapping. */
type Runner = RedisRunner;

export class RedisReceipts {
  readonly #store: Runner;
  readonly #prefix: string;

  constructor(store: Runner, prefix: string) {
    this.#store = store;
    this.#prefix = prefix;
  }

  async put(receipt: Receipt): Promise<void> {
    const k = receiptKeys(this.#prefix, receipt);
    // Once: a retried write must neither overwrite the receipt already handed out nor sequence a second leaf.
    await this.#store.runScript('putReceipt', PUT, [k.receipt, k.index, this.#prefix], [k.json, receipt.id, k.score, k.leaf]);
  }

  async list(principalId: string, day: string): Promise<Receipt[]> {
    const reply = await this.#store.runScript('listReceipts', LIST, [`${this.#prefix}rd:${day}:${principalId}`, this.#prefix], []);
    if (!Array.isArray(reply)) throw new TypeError(`unexpected store reply: ${typeof reply}`);
    return reply.filter((r) => typeof r === 'string').map((r: string) => JSON.parse(r) as Receipt);
  }

  async get(id: string): Promise<Receipt | null> {
    const reply = await this.#store.command('getReceipt', (c) => c.get(`${this.#prefix}r:${id}`));
    return reply === null ? null : (JSON.parse(String(reply)) as Receipt);
  }
}
