/**
 * The knowledge capability: the evidence (evidence.ts), its search index (search.ts) and its graph
 * (graph.ts), loaded once per process when it is first needed (not at start), and shared by every host and
 * every gateway in the process: the data is read-only and the same for all of them.
 *
 * The index is built by `npm run build` (build-index.ts, into dist/knowledge/) and read at start (also
 * when running from src/ by tsx, if that build is current); otherwise it is built at start. What loading
 * cost is measured here (`stats`); the figures are in docs/agents.md.
 */
import { Evidence, type SourceVersion } from './evidence.js';
import { KnowledgeSearch } from './search.js';

export interface Knowledge {
  evidence: Evidence;
  search: KnowledgeSearch;
  versions: Record<string, SourceVersion>;
  stats: { nodes: number; edges: number; loadMs: number; indexMs: number; index: 'file' | 'built'; heapBytes: number };
}

let shared: Knowledge | null = null;

export function loadKnowledge(): Knowledge {
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const evidence = Evidence.load();
  const t1 = performance.now();
  const search = KnowledgeSearch.open(evidence);
  const t2 = performance.now();
  return {
    evidence,
    search,
    versions: evidence.versions,
    stats: {
      nodes: evidence.nodes.size,
      edges: evidence.edgeCount,
      loadMs: Math.round(t1 - t0),
      indexMs: Math.round(t2 - t1),
      index: search.origin,
      // Approximate: garbage from parsing may still be counted; it is an upper bound of what stays.
      heapBytes: Math.max(0, process.memoryUsage().heapUsed - heap0),
    },
  };
}

/**
 * The process's one knowledge instance, built on first use: by the first search, context, graph MCP call or
 * control-plane document, not at start. It holds about 40 MiB of heap (80 MiB of RSS with the garbage of
 * reading it) that a gateway nobody searches on never needs; the first caller waits the load (a few hundred
 * ms) and gets the same answer as if it had been loaded at start.
 */
export function sharedKnowledge(): Knowledge {
  return (shared ??= loadKnowledge());
}

/** Whether the shared instance has been built yet (tests show the lazy path). */
export function knowledgeLoaded(): boolean {
  return shared !== null;
}
