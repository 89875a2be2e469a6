/**
 * The log's signer: every gateway runs one, and whichever holds the short store lease (log.ts) integrates
 * the leaves sequenced since the last checkpoint and signs the next checkpoint; the others only try to take
 * the lease. So several gateways never sign diverging heads (a checkpoint is stored only by the lease holder
 * and only on top of the one it read), and when the signer dies its lease lapses and another takes over
 * within `leaseMs`.
 *
 * It ticks every `everyMs / 2`, so a leaf is covered by a checkpoint at most about `everyMs` after it was
 * appended (receipts.checkpointEveryMs). A tick with nothing new costs one store round trip (the lease
 * renewal) plus one read; a checkpoint is signed only when the tree grew (and once at the very start, for
 * the empty log, so the checkpoint route always has an answer). The tree is deterministic in its leaves, so
 * a signer that lost its lease mid-write can at worst rewrite the same nodes; its checkpoint is refused.
 *
 * With witnesses configured (`cosign`), each new checkpoint is handed to them before it is stored, with a
 * way to build the consistency proof from any older size over the nodes just computed and those stored, so
 * the stored (and served) checkpoint already carries their cosignatures.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { ReceiptKey } from './key.js';
import type { ReceiptLog, StoredNode } from './log.js';
import { assemble, consistencyPlan, Frontier, planNodes, type NodeId } from './merkle.js';
import { signCheckpoint } from './note.js';

export interface CheckpointerOptions {
  /** The log's name: the checkpoints' origin line and their signature's key name. */
  origin: string;
  everyMs: number;
  leaseMs: number;
  /** Leaves integrated per store round trip (a long backlog takes several). */
  batch?: number;
  log: Logger;
  /**
   * Resolves true once the writes this process made so far are held by the store's replicas
   * (`Store.acknowledgeWrites`); without it, every leaf read is taken to be durable.
   */
  replicated?: () => Promise<boolean>;
  /**
   * Adds witness cosignatures to a new checkpoint (witness/witnesses.ts): given the signed note, its size,
   * the previous checkpoint's size and the consistency proof from any older size, the cosigned note.
   */
  cosign?: ((note: string, size: number, previous: number, proofFrom: (old: number) => Promise<Buffer[]>) => Promise<string>) | undefined;
}

const nodeKey = (id: NodeId): string => `${id.level}/${id.index}`;

export class Checkpointer {
  /** Random per process: two gateways never share it, so the lease tells them apart. */
  readonly owner = `signer_${randomBytes(9).toString('base64url')}`;
  readonly #log: ReceiptLog;
  readonly #key: ReceiptKey;
  readonly #opts: Required<Omit<CheckpointerOptions, 'cosign'>> & Pick<CheckpointerOptions, 'cosign'>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #holding = false;
  #failing = false;

  constructor(log: ReceiptLog, key: ReceiptKey, opts: CheckpointerOptions) {
    if (opts.leaseMs < opts.everyMs) throw new RangeError('receipts.leaseMs must be at least receipts.checkpointEveryMs');
    this.#log = log;
    this.#key = key;
    this.#opts = { batch: 4096, replicated: async () => true, ...opts };
  }

  /** True while this gateway holds the signing lease (as of its last tick). */
  get holding(): boolean {
    return this.#holding;
  }

  /**
   * One round: take or renew the lease and, holding it, bring the checkpoint up to the sequenced size.
   * Returns the size checkpointed, or null when another gateway holds the lease.
   */
  async tick(): Promise<number | null> {
    for (;;) {
      // Renewed before every batch, so a long backlog cannot outlast the lease mid-way.
      this.#holding = await this.#log.lease(this.owner, this.#opts.leaseMs);
      if (!this.#holding) return null;
      const p = await this.#log.pending(this.#opts.batch);
      const from = p.checkpoint?.size ?? 0;
      if (p.checkpoint && p.leaves.length === 0) return from;
      // Sign only over leaves the replicas hold, or a failover could lose leaves a signed checkpoint covers
      // and the log would fork. Replicas confirm what came before this process's own last write, so the
      // lease is renewed (a write) after the read: every leaf just read precedes it in the replication stream.
      if (p.leaves.length > 0) {
        this.#holding = await this.#log.lease(this.owner, this.#opts.leaseMs);
        if (!this.#holding) return null;
        if (!(await this.#opts.replicated())) {
          this.#opts.log.warn('receipts.checkpoint.unreplicated', {
            size: from + p.leaves.length,
            note: 'replicas have not confirmed the new leaves: not signed yet',
          });
          return from;
        }
      }
      const tree = new Frontier(from, p.frontier);
      const nodes: StoredNode[] = [];
      for (const leaf of p.leaves) nodes.push(...tree.append(leaf));
      let note = signCheckpoint({ origin: this.#opts.origin, size: tree.size, root: tree.root() }, this.#key.privateKey);
      if (this.#opts.cosign) note = await this.#opts.cosign(note, tree.size, from, this.#proofFrom(tree.size, from, p.leaves, nodes));
      const result = await this.#log.advance(this.owner, p.checkpoint?.size ?? -1, tree.size, nodes, note);
      if (result === 'lost') {
        this.#holding = false;
        return null;
      }
      // 'stale': another signer moved the head between our read and write (it held the lease before us); read again.
      if (result === 'ok') this.#opts.log.debug('receipts.checkpoint', { size: tree.size });
      if (result === 'ok' && tree.size >= p.size) return tree.size;
    }
  }

  /** The consistency proof from `old` to `size`, over the nodes not stored yet and those stored. */
  #proofFrom(size: number, from: number, leaves: Buffer[], made: StoredNode[]): (old: number) => Promise<Buffer[]> {
    return async (old) => {
      const fresh = new Map<string, Buffer>(made.map((n) => [nodeKey(n.id), n.hash]));
      leaves.forEach((leaf, i) => fresh.set(`0/${from + i}`, leaf));
      const plan = consistencyPlan(old, size);
      const ids = planNodes(plan);
      const stored = ids.filter((id) => !fresh.has(nodeKey(id)));
      const hashes = await this.#log.nodes(stored);
      stored.forEach((id, i) => fresh.set(nodeKey(id), hashes[i]!));
      return assemble(
        plan,
        ids,
        ids.map((id) => fresh.get(nodeKey(id))!),
      );
    };
  }

  start(): void {
    if (this.#timer) return;
    const every = Math.max(10, Math.floor(this.#opts.everyMs / 2));
    const run = () => {
      if (this.#running) return; // a slow round (a long backlog, a slow store) is not stacked
      this.#running = this.tick()
        .then(() => {
          if (this.#failing) this.#opts.log.info('receipts.checkpoint.recovered', {});
          this.#failing = false;
        })
        .catch((err: unknown) => {
          // Once per outage, not twice a second: with the store down every tick fails the same way.
          if (!this.#failing) this.#opts.log.warn('receipts.checkpoint.failed', { error: err instanceof Error ? err.message : String(err) });
          this.#failing = true;
        })
        .finally(() => (this.#running = undefined));
    };
    this.#timer = setInterval(run, every).unref();
    run();
  }

  /** Stops ticking and hands the lease over at once (a crash hands it over when it lapses instead). */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
    if (this.#holding) await this.#log.unlease(this.owner).catch(() => undefined);
    this.#holding = false;
  }
}
