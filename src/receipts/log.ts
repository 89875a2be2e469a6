/**
 * The receipt log's storage: one append-only Merkle log per deployment (merkle.ts), beside the receipts.
 *
 * Who writes what:
 *   sequencing  the store's receipt write (the meter's settlement script, or `putReceipt` for a call that
 *               holds nothing) assigns the next index and stores the leaf hash, in the same atomic write as
 *               the receipt (and its charge): no receipt without its leaf, no leaf without its receipt.
 *               That is all a call pays: one SHA-256 (the leaf hash) and a few bytes in that write.
 *   integrating whichever gateway holds the signing lease (checkpointer.ts) reads the leaves sequenced since
 *               the last checkpoint, stores the complete subtrees they close, and stores the new signed
 *               checkpoint — nodes and checkpoint in one write, only while it still holds the lease and only
 *               on top of the checkpoint it read (so a signer that lost its lease cannot move the head).
 *   proving     anyone reads the checkpoint and the O(log n) stored nodes a proof folds from (proofs.ts).
 *
 * Implementations: `redis-log.ts` (scripts on the store's connection) and `memory-log.ts` (one process,
 * beside the memory store); one contract suite (test/receipts/log.contract.test.ts) runs against both.
 */
import type { NodeId } from './merkle.js';

export interface StoredCheckpoint {
  size: number;
  /** The signed note (note.ts). */
  note: string;
}

/** What the signer needs to advance the log. */
export interface Pending {
  /** Leaves sequenced so far. */
  size: number;
  /** The latest checkpoint; null before the first. */
  checkpoint: StoredCheckpoint | null;
  /** Leaf hashes from the checkpoint's size on (at most the `max` asked for). */
  leaves: Buffer[];
  /** The hashes of `frontierNodes(checkpoint size)`: the tree the new leaves grow. */
  frontier: Buffer[];
}

export interface StoredNode {
  id: NodeId;
  hash: Buffer;
}

export type AdvanceResult = 'ok' | 'lost' | 'stale';

export interface ReceiptLog {
  readonly kind: 'memory' | 'redis';
  /** Takes the signing lease for `owner`, or renews it if `owner` holds it; true while `owner` holds it. */
  lease(owner: string, ms: number): Promise<boolean>;
  /** Gives the lease up, if `owner` holds it (a clean shutdown hands over at once). */
  unlease(owner: string): Promise<void>;
  pending(max: number): Promise<Pending>;
  /**
   * Stores `nodes` and `note` (the checkpoint of `toSize`) in one write — if `owner` still holds the lease
   * ('lost' otherwise) and the latest checkpoint is still of `fromSize`, -1 for none ('stale' otherwise).
   */
  advance(owner: string, fromSize: number, toSize: number, nodes: StoredNode[], note: string): Promise<AdvanceResult>;
  /** The latest signed checkpoint; null before the first. */
  checkpoint(): Promise<StoredCheckpoint | null>;
  /** Stored node hashes, in the order asked; throws when one is not stored (beyond the checkpoint). */
  nodes(ids: NodeId[]): Promise<Buffer[]>;
}
