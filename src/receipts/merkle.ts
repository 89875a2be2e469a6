/**
 * The Merkle tree of the receipt log, as RFC 6962 / RFC 9162 define it (the trees of Certificate
 * Transparency and of Go's checksum database): leaf hash = SHA-256(0x00 || leaf), node hash =
 * SHA-256(0x01 || left || right), the tree of n leaves split at the largest power of two below n.
 *
 * The store keeps the hash of every complete, aligned subtree (`NodeId` {level, index}: the 2^level
 * leaves from index * 2^level), written once and never changed. Any subtree hash a proof needs is then the
 * fold of O(log n) of them (`rangeNodes`), so a proof costs O(log n) store reads. Proofs are built in two
 * steps so the store is asked once: `inclusionPlan`/`consistencyPlan` name the stored nodes a proof needs,
 * `assemble` folds the fetched hashes into the proof. `verifyInclusion`/`verifyConsistency` are RFC 9162
 * sections 2.1.3.2 and 2.1.4.2, step by step; `Frontier` grows a tree leaf by leaf (the log's integrator).
 *
 * Sizes and indices are plain numbers (exact below 2^53); halving uses arithmetic, not 32-bit bit operators.
 */
import { createHash, hash as oneShotHash } from 'node:crypto';

export const HASH_BYTES = 32;

const LEAF_PREFIX = Buffer.of(0);
const NODE_PREFIX = Buffer.of(1);

/**
 * The leaf hash of bytes, or of a text's UTF-8 bytes: a text is hashed in one call behind the prefix's
 * one byte (U+0000 is the byte 0x00 in UTF-8), with no Hash object and no copy of its bytes first.
 */
export function leafHash(leaf: Uint8Array | string): Buffer {
  if (typeof leaf === 'string') return oneShotHash('sha256', `\u0000${leaf}`, 'buffer');
  return createHash('sha256').update(LEAF_PREFIX).update(leaf).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
}

/** The hash of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT = createHash('sha256').digest();

/** A complete, aligned subtree: leaves [index * 2^level, (index + 1) * 2^level). */
export interface NodeId {
  level: number;
  index: number;
}

const half = (n: number): number => Math.floor(n / 2);
const odd = (n: number): boolean => n % 2 === 1;

/** The largest power of two strictly below n (n >= 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** Math.round(Math.log2(n)) === n;
}

/**
 * The stored nodes whose fold (`foldRange`) is the hash of leaves [a, b), for a range the RFC's recursion
 * reaches: its left parts are complete and aligned, so each is one stored node.
 */
export function rangeNodes(a: number, b: number): NodeId[] {
  const n = b - a;
  if (n < 1) throw new RangeError(`empty range [${a}, ${b})`);
  if (isPowerOfTwo(n) && a % n === 0) return [{ level: Math.round(Math.log2(n)), index: a / n }];
  const k = split(n);
  return [...rangeNodes(a, a + k), ...rangeNodes(a + k, b)];
}

/** MTH of a range from its `rangeNodes` hashes: H(n1, H(n2, ... H(n(m-1), nm))). */
export function foldRange(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) throw new RangeError('no hashes to fold');
  let h = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i -= 1) h = nodeHash(hashes[i]!, h);
  return h;
}

/** A proof to build: each element is the fold of a range of stored nodes. */
export type ProofPlan = NodeId[][];

/** RFC 9162 2.1.3.1 PATH(m, D[a:b]), as the ranges whose hashes make it, nearest the leaf first. */
function path(m: number, a: number, b: number): Array<[number, number]> {
  if (b - a === 1) return [];
  const k = split(b - a);
  return m < a + k ? [...path(m, a, a + k), [a + k, b]] : [...path(m, a + k, b), [a, a + k]];
}

/** RFC 9162 2.1.4.1 SUBPROOF(m, D[a:b], whole), m being a size relative to a. */
function subproof(m: number, a: number, b: number, whole: boolean): Array<[number, number]> {
  const n = b - a;
  if (m === n) return whole ? [] : [[a, b]];
  const k = split(n);
  return m <= k ? [...subproof(m, a, a + k, whole), [a + k, b]] : [...subproof(m - k, a + k, b, false), [a, a + k]];
}

/** The plan of the inclusion proof of leaf `index` in the tree of `size` leaves. */
export function inclusionPlan(index: number, size: number): ProofPlan {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  }
  return path(index, 0, size).map(([a, b]) => rangeNodes(a, b));
}

/** The plan of the consistency proof from the tree of `from` leaves to the tree of `to` (1 <= from <= to). */
export function consistencyPlan(from: number, to: number): ProofPlan {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 1 || from > to) {
    throw new RangeError(`no consistency proof from ${from} to ${to}`);
  }
  return subproof(from, 0, to, true).map(([a, b]) => rangeNodes(a, b));
}

/** The plan of the root of the tree of `size` leaves (size >= 1). */
export function rootPlan(size: number): NodeId[] {
  return rangeNodes(0, size);
}

/** Every distinct node a plan needs, for one read. */
export function planNodes(plan: ProofPlan): NodeId[] {
  const seen = new Map<string, NodeId>();
  for (const id of plan.flat()) seen.set(`${id.level}/${id.index}`, id);
  return [...seen.values()];
}

/** The proof, from the hashes of `planNodes(plan)` (same order). */
export function assemble(plan: ProofPlan, nodes: readonly NodeId[], hashes: readonly Buffer[]): Buffer[] {
  const byId = new Map<string, Buffer>();
  nodes.forEach((id, i) => byId.set(`${id.level}/${id.index}`, hashes[i]!));
  return plan.map((range) =>
    foldRange(
      range.map((id) => {
        const h = byId.get(`${id.level}/${id.index}`);
        if (!h) throw new Error(`node ${id.level}/${id.index} was not read`);
        return h;
      }),
    ),
  );
}

const equal = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/** RFC 9162 2.1.3.2: whether `proof` shows leaf `index` (hash `leaf`) in the tree of `size` with `root`. */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r: Uint8Array = leaf;
  for (const p of proof) {
    if (p.length !== HASH_BYTES || sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equal(r, root);
}

/** RFC 9162 2.1.4.2: whether `proof` shows the tree (`from`, `fromRoot`) is a prefix of (`to`, `toRoot`). */
export function verifyConsistency(from: number, to: number, fromRoot: Uint8Array, toRoot: Uint8Array, proof: readonly Uint8Array[]): boolean {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 1 || from > to) return false;
  if (proof.some((p) => p.length !== HASH_BYTES)) return false;
  if (from === to) return proof.length === 0 && equal(fromRoot, toRoot);
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  if (path.length === 0) return false;
  let fn = from - 1;
  let sn = to - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Uint8Array = path[0]!;
  let sr: Uint8Array = path[0]!;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!odd(fn) && fn !== 0) {
          fn = half(fn);
          sn = half(sn);
        }
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equal(fr, fromRoot) && equal(sr, toRoot);
}

/** The complete subtrees of [0, size), largest (leftmost) first: what a tree of that size grows from. */
export function frontierNodes(size: number): NodeId[] {
  const out: NodeId[] = [];
  let start = 0;
  for (let level = Math.floor(Math.log2(Math.max(size, 1))) + 1; level >= 0; level -= 1) {
    const width = 2 ** level;
    if (start + width <= size) {
      out.push({ level, index: start / width });
      start += width;
    }
  }
  return out;
}

/**
 * A tree grown leaf by leaf from the frontier of its first `size` leaves: each append yields the complete
 * subtrees it closes (to be stored), and `root()` is the tree's hash. O(log n) memory.
 */
export class Frontier {
  #size: number;
  readonly #stack: Array<{ id: NodeId; hash: Buffer }>;

  constructor(size: number, frontier: readonly Buffer[]) {
    const ids = frontierNodes(size);
    if (ids.length !== frontier.length) throw new RangeError(`a tree of ${size} has ${ids.length} frontier nodes, not ${frontier.length}`);
    this.#size = size;
    this.#stack = ids.map((id, i) => ({ id, hash: frontier[i]! }));
  }

  get size(): number {
    return this.#size;
  }

  /** Appends a leaf (its leaf hash); returns the nodes above level 0 this completes. */
  append(leaf: Buffer): Array<{ id: NodeId; hash: Buffer }> {
    const made: Array<{ id: NodeId; hash: Buffer }> = [];
    let node = { id: { level: 0, index: this.#size }, hash: leaf };
    while (odd(node.id.index)) {
      const left = this.#stack.pop()!;
      node = { id: { level: node.id.level + 1, index: half(node.id.index) }, hash: nodeHash(left.hash, node.hash) };
      made.push(node);
    }
    this.#stack.push(node);
    this.#size += 1;
    return made;
  }

  root(): Buffer {
    return this.#size === 0 ? EMPTY_ROOT : foldRange(this.#stack.map((n) => n.hash));
  }
}
