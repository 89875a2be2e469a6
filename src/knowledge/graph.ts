/**
 * The evidence as a graph (nodes = entries, edges = typed relations): one node, its neighbours by edge type
 * and depth, the shortest path between two ids. Every walk is bounded by depth, by result count and by
 * time, so no question costs more than a few milliseconds of one core, whatever the graph grows to.
 */
import { GatewayError } from '../errors.js';
import type { Evidence, EvidenceNode, Relation } from './evidence.js';
import type { NeighboursParams, PathParams } from './schemas.js';

/** The most time one walk may take; past it the answer says `truncated`. */
const WALK_BUDGET_MS = 250;

export interface NodeRef {
  id: string;
  kind: string;
  title: string;
}
const ref = (n: EvidenceNode): NodeRef => ({ id: n.id, kind: n.kind, title: n.title });

export function mustFind(evidence: Evidence, id: string): EvidenceNode {
  const n = evidence.find(id);
  if (!n) throw new GatewayError('knowledge-not-found', `${id} is not in the knowledge evidence`);
  return n;
}

/** One node with its degree per edge type, so a client can choose what to walk. */
export function graphNode(evidence: Evidence, id: string) {
  const n = mustFind(evidence, id);
  const edges: Record<string, { out: number; in: number }> = {};
  for (const r of evidence.relations.get(n.id) ?? []) {
    const e = (edges[r.type] ??= { out: 0, in: 0 });
    e[r.direction] += 1;
  }
  return { ...ref(n), source: n.source, url: n.url ?? null, text: n.text, edges };
}

function follows(r: Relation, types: Set<string> | null, direction: 'out' | 'in' | 'both'): boolean {
  return (!types || types.has(r.type)) && (direction === 'both' || r.direction === direction);
}

export function neighbours(evidence: Evidence, p: NeighboursParams) {
  const start = mustFind(evidence, p.id);
  const types = p.types?.length ? new Set(p.types) : null;
  const deadline = performance.now() + WALK_BUDGET_MS;
  const seen = new Set([start.id]);
  const nodes: Array<NodeRef & { depth: number; via: { from: string; type: string; direction: 'out' | 'in' } }> = [];
  let frontier = [start.id];
  let truncated = false;
  for (let depth = 1; depth <= p.depth && frontier.length && !truncated; depth++) {
    const next: string[] = [];
    for (const from of frontier) {
      for (const r of evidence.relations.get(from) ?? []) {
        if (!follows(r, types, p.direction) || seen.has(r.id)) continue;
        if (nodes.length >= p.limit || performance.now() > deadline) {
          truncated = true;
          break;
        }
        seen.add(r.id);
        const n = evidence.nodes.get(r.id)!;
        nodes.push({ ...ref(n), depth, via: { from, type: r.type, direction: r.direction } });
        next.push(r.id);
      }
      if (truncated) break;
    }
    frontier = next;
  }
  return { id: start.id, depth: p.depth, direction: p.direction, types: p.types ?? null, count: nodes.length, truncated, nodes };
}

/** Breadth-first over edges in either direction: the fewest hops, each hop named with its edge as the data writes it. */
export function shortestPath(evidence: Evidence, p: PathParams) {
  const from = mustFind(evidence, p.from);
  const to = mustFind(evidence, p.to);
  const types = p.types?.length ? new Set(p.types) : null;
  const deadline = performance.now() + WALK_BUDGET_MS;
  const back = new Map<string, { prev: string; r: Relation }>();
  const seen = new Set([from.id]);
  let frontier = [from.id];
  let truncated = false;
  for (let depth = 0; depth < p.maxDepth && frontier.length && !seen.has(to.id); depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      if (performance.now() > deadline) {
        truncated = true;
        break;
      }
      for (const r of evidence.relations.get(id) ?? []) {
        if (!follows(r, types, 'both') || seen.has(r.id)) continue;
        seen.add(r.id);
        back.set(r.id, { prev: id, r });
        next.push(r.id);
      }
    }
    if (truncated) break;
    frontier = next;
  }
  if (!seen.has(to.id)) return { from: from.id, to: to.id, found: false, truncated, length: null, nodes: [], edges: [] };
  const ids = [to.id];
  const edges: Array<{ from: string; type: string; to: string }> = [];
  for (let at = to.id; at !== from.id;) {
    const step = back.get(at)!;
    // An `in` relation seen from prev means at -type-> prev in the data; keep the data's direction.
    edges.unshift(step.r.direction === 'out' ? { from: step.prev, type: step.r.type, to: at } : { from: at, type: step.r.type, to: step.prev });
    ids.unshift(step.prev);
    at = step.prev;
  }
  return { from: from.id, to: to.id, found: true, truncated: false, length: edges.length, nodes: ids.map((i) => ref(evidence.nodes.get(i)!)), edges };
}
