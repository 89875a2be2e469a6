/**
 * Proofs as the API serves them, built from the stored nodes in one read each (merkle.ts plans them):
 *
 *   withProof    a receipt with `logIndex`, `inclusionProof` (base64 hashes, leaf side first) and the
 *                signed `checkpoint` whose tree contains it — or `logIndex` and `pending: true` while no
 *                checkpoint covers it yet (for at most about receipts.checkpointEveryMs)
 *   consistency  the RFC 9162 consistency proof between two tree sizes, both at most the checkpoint's
 */
import type { Receipt } from '../store/store.js';
import type { ReceiptLog, StoredCheckpoint } from './log.js';
import { assemble, consistencyPlan, inclusionPlan, planNodes } from './merkle.js';
import { GatewayError } from '../errors.js';

export type ReceiptWithProof = Receipt & { logIndex: number } & ({ inclusionProof: string[]; checkpoint: string } | { pending: true });

const b64 = (hs: Buffer[]): string[] => hs.map((h) => h.toString('base64'));

export async function withProof(log: ReceiptLog, receipt: Receipt): Promise<ReceiptWithProof | Receipt> {
  const index = receipt['logIndex'];
  // A receipt stored before the log (pre-log, signed on its own) is served as it is.
  if (typeof index !== 'number') return receipt;
  const cp = await log.checkpoint();
  if (!cp || index >= cp.size) return { ...receipt, logIndex: index, pending: true };
  const plan = inclusionPlan(index, cp.size);
  const ids = planNodes(plan);
  return { ...receipt, logIndex: index, inclusionProof: b64(assemble(plan, ids, await log.nodes(ids))), checkpoint: cp.note };
}

/** Reads `from` and `to` from a query: decimal integers, 1 <= from <= to <= the checkpoint's size. */
export function parseRange(query: Record<string, unknown>, cp: StoredCheckpoint | null): { from: number; to: number } {
  const int = (name: string): number => {
    const v = query[name];
    if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,15})$/.test(v))
      throw new GatewayError('log-range-invalid', `${name} must be a tree size (a decimal integer)`);
    return Number(v);
  };
  const from = int('from');
  const to = int('to');
  const size = cp?.size ?? 0;
  if (from < 1 || from > to) throw new GatewayError('log-range-invalid', 'from must be at least 1 and at most to');
  if (to > size) throw new GatewayError('log-range-invalid', `to is beyond the latest checkpoint (tree size ${size})`);
  return { from, to };
}

export async function consistency(log: ReceiptLog, from: number, to: number): Promise<string[]> {
  const plan = consistencyPlan(from, to);
  const ids = planNodes(plan);
  return b64(assemble(plan, ids, await log.nodes(ids)));
}
