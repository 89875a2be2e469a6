/**
 * The evidence: public security knowledge shipped with the project (data/knowledge/evidence.json.gz, built
 * by scripts/knowledge-build.mjs from pinned registry packages and vendored files). Nodes are entries under
 * their public identifiers (CWE-89, CAPEC-66, CVE-2021-44228, T1190, M1048, AML.T0051, LLM01, INC-04853);
 * edges are the typed relations
 * the sources carry. An id known only as a reference (a CAPEC id named by a CWE, a CVE named as an observed
 * example) is still a node, with its relations.
 *
 * Read-only and the same for every instance, so it lives in the process (no store, no Redis twin): a
 * deployment updates it by shipping a new file, never at run time.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

export const NODE_KINDS = [
  'cwe',
  'capec',
  'cve',
  'attack-technique',
  'attack-mitigation',
  'ai-incident',
  'atlas-technique',
  'owasp-llm',
  'owasp-agentic',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export interface EvidenceNode {
  id: string;
  kind: NodeKind;
  title: string;
  text: string;
  /** Which source described it: cwe, kev, attack, or `*-reference` / `cwe-observed-example` for ids known by mention. */
  source: string;
  url?: string;
  abstraction?: string;
  /** Other names the source gives the entry (CWE's alternate terms: "SQL injection", "SQLi"). */
  aliases?: string[];
  tactics?: string[];
  kev?: { dateAdded: string; dueDate: string; vendor: string; product: string; ransomware: string };
}

/** One edge seen from a node: `out` means node -type-> id, `in` means id -type-> node. */
export interface Relation {
  type: string;
  direction: 'out' | 'in';
  id: string;
}

export interface SourceVersion {
  version: string;
  date?: string;
  package?: string;
  source?: string;
  domain?: string;
  licence: string;
}

interface EvidenceFile {
  format: 1;
  versions: Record<string, SourceVersion>;
  counts: Record<string, number>;
  nodes: EvidenceNode[];
  edgeList: Array<[string, string, string]>;
}

export const EVIDENCE_FILE = new URL('../../data/knowledge/evidence.json.gz', import.meta.url);

export class Evidence {
  readonly nodes = new Map<string, EvidenceNode>();
  /** Relations per node, both directions, in the file's (sorted) order. */
  readonly relations = new Map<string, Relation[]>();
  readonly edgeCount: number;

  constructor(
    readonly versions: Record<string, SourceVersion>,
    nodes: EvidenceNode[],
    edges: Array<[string, string, string]>,
    /** The SHA-256 of the evidence file: what a serialized search index must have been built from. */
    readonly sha256: string,
  ) {
    for (const n of nodes) this.nodes.set(n.id, n);
    for (const [from, type, to] of edges) {
      this.relationsOf(from).push({ type, direction: 'out', id: to });
      this.relationsOf(to).push({ type, direction: 'in', id: from });
    }
    this.edgeCount = edges.length;
  }

  static load(file: URL | string = EVIDENCE_FILE): Evidence {
    const bytes = readFileSync(file);
    const data = JSON.parse(gunzipSync(bytes).toString('utf8')) as EvidenceFile;
    if (data.format !== 1) throw new Error(`knowledge evidence: unknown format ${String(data.format)}`);
    return new Evidence(data.versions, data.nodes, data.edgeList, createHash('sha256').update(bytes).digest('hex'));
  }

  /** Ids are matched case-insensitively (`cwe-89` is CWE-89); the answer always carries the canonical id. */
  find(id: string): EvidenceNode | undefined {
    return this.nodes.get(id) ?? this.nodes.get(id.toUpperCase());
  }

  private relationsOf(id: string): Relation[] {
    let list = this.relations.get(id);
    if (!list) this.relations.set(id, (list = []));
    return list;
  }
}
