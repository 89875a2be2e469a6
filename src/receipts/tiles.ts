/**
 * The log's hash tiles, as C2SP tlog-tiles (https://c2sp.org/tlog-tiles) lays them out, so a tlog client can
 * audit the tree from the checkpoint and the tiles alone: tile `<L>/<N>` holds the 256 hashes of tree level
 * 8·L from node 256·N on, as raw 32-byte hashes; `<L>/<N>.p/<W>` its first W (the right edge of the tree).
 * N is written in groups of three digits, all but the last prefixed `x` (1234067 -> x001/x234/067).
 *
 * Only tiles the latest checkpoint covers are served, so a tile never changes once served. Entry bundles
 * (`tile/entries/...`, the leaves' data) are not served: they would be the receipts, and a receipt is its
 * principal's. The store keeps every level in chunks of 256 hashes (redis-log.ts), so a tile is one read.
 */
import type { NodeId } from './merkle.js';

export const TILE_WIDTH = 256;
const TILE_HEIGHT = 8;

export interface TileRef {
  level: number;
  index: number;
  width: number;
}

/** Encodes a tile index as C2SP does. */
export function tileIndexPath(n: number): string {
  let s = String(n % 1000).padStart(3, '0');
  for (let rest = Math.floor(n / 1000); rest > 0; rest = Math.floor(rest / 1000)) s = `x${String(rest % 1000).padStart(3, '0')}/${s}`;
  return s;
}

export function tilePath(t: TileRef): string {
  return `${t.level}/${tileIndexPath(t.index)}${t.width === TILE_WIDTH ? '' : `.p/${t.width}`}`;
}

/** Reads `<L>/<N>[.p/<W>]`; null when it is not a well-formed tile path (only the canonical spelling is). */
export function parseTilePath(path: string): TileRef | null {
  const m = /^(0|[1-9][0-9]?)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([1-9][0-9]{0,2}))?$/.exec(path);
  if (!m) return null;
  const level = Number(m[1]);
  const index = m[2]!.split('/').reduce((n, g) => n * 1000 + Number(g.replace('x', '')), 0);
  const width = m[3] === undefined ? TILE_WIDTH : Number(m[3]);
  if (level > 63 || width >= TILE_WIDTH + (m[3] === undefined ? 1 : 0) || !Number.isSafeInteger(index)) return null;
  const ref = { level, index, width };
  return tilePath(ref) === path ? ref : null;
}

/** The stored nodes of a tile, or null when the tree of `size` leaves does not hold all of them yet. */
export function tileNodes(t: TileRef, size: number): NodeId[] | null {
  const treeLevel = t.level * TILE_HEIGHT;
  const complete = Math.floor(size / 2 ** treeLevel); // complete subtrees at that level
  const first = t.index * TILE_WIDTH;
  if (first + t.width > complete) return null;
  return Array.from({ length: t.width }, (_, i) => ({ level: treeLevel, index: first + i }));
}
