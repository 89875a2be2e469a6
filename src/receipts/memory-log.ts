/**
 * The receipt log in one process, beside the memory store (which sequences leaves in `putReceipt`, in the
 * same synchronous step as it stores the receipt): the same answers as the Redis log, without durability.
 */
import type { NodeId } from './merkle.js';
import type { AdvanceResult, Pending, ReceiptLog, StoredCheckpoint, StoredNode } from './log.js';
import { frontierNodes } from './merkle.js';

const key = (id: NodeId): string => `${id.level}/${id.index}`;

/** The log's state, owned by the memory store: leaves are appended where receipts are stored. */
export class MemoryLogTree {
  readonly leaves: Buffer[] = [];
  readonly nodes = new Map<string, Buffer>();
  checkpoint: StoredCheckpoint | null = null;
  lease: { owner: string; until: number } | null = null;

  /** Sequences a leaf; returns its index. */
  append(leafHash: Buffer): number {
    this.leaves.push(leafHash);
    return this.leaves.length - 1;
  }

  node(id: NodeId): Buffer | undefined {
    return id.level === 0 ? this.leaves[id.index] : this.nodes.get(key(id));
  }
}

export class MemoryReceiptLog implements ReceiptLog {
  readonly kind = 'memory' as const;
  readonly #tree: MemoryLogTree;
  readonly #now: () => number;

  constructor(tree: MemoryLogTree, now: () => number = Date.now) {
    this.#tree = tree;
    this.#now = now;
  }

  async lease(owner: string, ms: number): Promise<boolean> {
    const t = this.#tree;
    const now = this.#now();
    if (t.lease && t.lease.owner !== owner && t.lease.until > now) return false;
    t.lease = { owner, until: now + ms };
    return true;
  }

  async unlease(owner: string): Promise<void> {
    if (this.#tree.lease?.owner === owner) this.#tree.lease = null;
  }

  async pending(max: number): Promise<Pending> {
    const t = this.#tree;
    const from = t.checkpoint?.size ?? 0;
    const to = Math.min(t.leaves.length, from + max);
    return {
      size: t.leaves.length,
      checkpoint: t.checkpoint ? { ...t.checkpoint } : null,
      leaves: t.leaves.slice(from, to),
      frontier: frontierNodes(from).map((id) => t.node(id)!),
    };
  }

  async advance(owner: string, fromSize: number, toSize: number, nodes: StoredNode[], note: string): Promise<AdvanceResult> {
    const t = this.#tree;
    if (!t.lease || t.lease.owner !== owner || t.lease.until <= this.#now()) return 'lost';
    if ((t.checkpoint?.size ?? -1) !== fromSize) return 'stale';
    for (const n of nodes) if (n.id.level > 0) t.nodes.set(key(n.id), n.hash);
    t.checkpoint = { size: toSize, note };
    return 'ok';
  }

  async checkpoint(): Promise<StoredCheckpoint | null> {
    return this.#tree.checkpoint ? { ...this.#tree.checkpoint } : null;
  }

  async nodes(ids: NodeId[]): Promise<Buffer[]> {
    return ids.map((id) => {
      const h = this.#tree.node(id);
      if (!h) throw new Error(`log node ${id.level}/${id.index} is not stored`);
      return h;
    });
  }
}
