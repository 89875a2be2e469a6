/**
 * Ranked full-text search over the evidence, by MiniSearch (BM25+ ranking, prefix and fuzzy matching) with
 * the Porter stemmer (`stemmer`): the library scores, we only choose the fields, the boosts and how terms
 * are cut. Public identifiers (CWE-89, CVE-2021-44228, T1059.001, AML.T0051, LLM01) are kept whole as one term, so a search
 * for an id finds that entry first instead of every text that mentions "89".
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import MiniSearch, { type Options, type SearchResult } from 'minisearch';
import { stemmer } from 'stemmer';
import type { Evidence, EvidenceNode, NodeKind } from './evidence.js';

/** The pinned library version (our package.json pins it exactly; minisearch does not export its own). */
const MINISEARCH_VERSION = (createRequire(import.meta.url)('../../package.json') as { dependencies: Record<string, string> }).dependencies['minisearch'];

const ID_SHAPE = /\b(?:cwe|capec|cve|inc)-\d+(?:-\d+)?\b|\b(?:aml\.)?[tm]\d{4}(?:\.\d{3})?\b|\b(?:llm|asi)\d{2}\b/gi;
const WORDS = /[\p{L}\p{N}]+/gu;

/** Ids whole, then the remaining words. */
export function tokenize(text: string): string[] {
  const ids = text.match(ID_SHAPE) ?? [];
  const rest = text.replace(ID_SHAPE, ' ').match(WORDS) ?? [];
  return [...ids, ...rest];
}

const WHOLE_ID = /^(?:(?:cwe|capec|cve|inc)-\d+(?:-\d+)?|(?:aml\.)?[tm]\d{4}(?:\.\d{3})?|(?:llm|asi)\d{2})$/;

/**
 * English function words: they occur in nearly every entry, so they rank nothing and only widen every
 * search (MiniSearch's documented way is to drop them in processTerm).
 */
const STOP_WORDS = new Set(
  'a an and are as at be been but by can could do does for from has have if in into is it its may might must no not of on or such than that the their then there these this to was were when which while will with would'.split(
    ' ',
  ),
);

/** A query term: an id as it is, a word by its Porter stem, a function word not at all. */
function queryTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (WHOLE_ID.test(t)) return t;
  return t.length > 1 && !STOP_WORDS.has(t) ? stemmer(t) : null;
}

/**
 * An indexed term: the stem and, when it differs, the word itself. The stem makes "injected" find
 * "injection"; the word keeps prefix matching true to what was typed ("deserializ" stems to itself and
 * would never be a prefix of the stem "deseri" of "deserialization", but it is a prefix of the word).
 */
function indexTerm(term: string): string | string[] | null {
  const stem = queryTerm(term);
  const t = term.toLowerCase();
  return stem && stem !== t ? [stem, t] : stem;
}

export interface SearchHit {
  id: string;
  kind: NodeKind;
  title: string;
  snippet: string;
  score: number;
}

export interface SearchPage {
  total: number;
  data: SearchHit[];
}

/** Described entries weigh more than ids known only by mention, which carry no text of their own. */
const KIND_BOOST: Record<string, number> = {
  cwe: 1.3,
  'attack-technique': 1.2,
  'attack-mitigation': 1.1,
  cve: 1,
  'ai-incident': 1,
  capec: 0.8,
  'atlas-technique': 0.8,
  'owasp-llm': 0.8,
  'owasp-agentic': 0.8,
};

/** The index's options; the same object builds an index and reads a serialized one back. */
function indexOptions(evidence: Evidence): Options<EvidenceNode> {
  return {
    fields: [...FIELDS],
    extractField: (doc, field) => (field === 'aliases' ? (doc.aliases ?? []).join(' ; ') : (doc[field as keyof EvidenceNode] as string)),
    storeFields: [],
    tokenize,
    processTerm: indexTerm,
    searchOptions: {
      processTerm: queryTerm,
      boost: { id: 8, title: 3, aliases: 3 },
      // An id is exact: CWE-89 must not pull in CWE-890 by prefix or CWE-88 by edit distance.
      prefix: (term) => term.length >= 3 && !WHOLE_ID.test(term),
      fuzzy: (term) => (term.length >= 6 && !WHOLE_ID.test(term) ? 0.15 : false),
      boostDocument: (id) => KIND_BOOST[evidence.nodes.get(id as string)?.kind ?? ''] ?? 1,
    },
  };
}

const FIELDS = ['id', 'title', 'aliases', 'text'] as const;
const PROBE = 'CWE-89 AML.T0051 LLM01 T1059.001 INC-05172 Injected the queries, of deserialization; Log4j2 CVE-2021-44228 über-exploits';

/**
 * What a serialized index depends on besides the evidence: the fields, how text is cut into terms, and
 * the library's format. A change to any of them changes this, and a stale index file is then ignored.
 */
export function indexFingerprint(): string {
  const terms = tokenize(PROBE).map((t) => [indexTerm(t), queryTerm(t)]);
  return createHash('sha256')
    .update(JSON.stringify({ fields: FIELDS, terms, stop: [...STOP_WORDS], minisearch: MINISEARCH_VERSION }))
    .digest('hex')
    .slice(0, 16);
}

/** Where `npm run build` writes the index: beside this module once compiled (dist/knowledge/). */
export const INDEX_FILE = new URL('./search-index.json.gz', import.meta.url);
/**
 * Where a gateway looks for it: beside this module, then (when run from src/ by tsx, as tests and
 * `node --import tsx src/main.ts` do) in dist/knowledge/ of the same checkout. Either is used only when
 * it was built from the same evidence by the same indexing code, so a stale build is never read.
 */
const INDEX_FILES = [INDEX_FILE, new URL('../../dist/knowledge/search-index.json.gz', import.meta.url)];

export class KnowledgeSearch {
  private constructor(
    private readonly evidence: Evidence,
    private readonly index: MiniSearch<EvidenceNode>,
    /** `file` when read from the index file built with the code, `built` when indexed at start. */
    readonly origin: 'file' | 'built',
  ) {}

  static build(evidence: Evidence): KnowledgeSearch {
    const index = new MiniSearch<EvidenceNode>(indexOptions(evidence));
    index.addAll([...evidence.nodes.values()]);
    return new KnowledgeSearch(evidence, index, 'built');
  }

  /** The first index file built from this evidence with this code, else a fresh index. */
  static open(evidence: Evidence, files: readonly URL[] = INDEX_FILES): KnowledgeSearch {
    const fingerprint = indexFingerprint();
    for (const file of files) {
      let saved: { evidence: string; fingerprint: string; index: unknown } | null;
      try {
        saved = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as typeof saved;
      } catch {
        continue; // absent or unreadable: try the next, or index at start
      }
      if (saved && saved.evidence === evidence.sha256 && saved.fingerprint === fingerprint) {
        return new KnowledgeSearch(evidence, MiniSearch.loadJS(saved.index as Parameters<typeof MiniSearch.loadJS>[0], indexOptions(evidence)), 'file');
      }
    }
    return KnowledgeSearch.build(evidence);
  }

  /** The index file's content: the index with what it was built from. */
  serialize(): Buffer {
    return gzipSync(Buffer.from(JSON.stringify({ evidence: this.evidence.sha256, fingerprint: indexFingerprint(), index: this.index.toJSON() })), { level: 6 });
  }

  search(q: string, opts: { limit: number; offset: number; kind?: NodeKind }): SearchPage {
    const kind = opts.kind;
    // Each distinct term is one walk of the index (with prefix and fuzzy expansion): repeats add nothing
    // but cost, and past MAX_TERMS a query is a paragraph, not a search. This bounds a query's cost.
    const terms = [...new Set(tokenize(q).map((t) => t.toLowerCase()))].filter((t) => !STOP_WORDS.has(t)).slice(0, MAX_TERMS);
    const results = this.index.search(terms.join(' '), kind ? { filter: (r) => this.evidence.nodes.get(r.id as string)?.kind === kind } : {});
    const page = results.slice(opts.offset, opts.offset + opts.limit);
    return {
      total: results.length,
      data: page.map((r) => {
        const n = this.evidence.nodes.get(r.id as string)!;
        return { id: n.id, kind: n.kind, title: n.title, snippet: snippet(n, r), score: Math.round(r.score * 1000) / 1000 };
      }),
    };
  }

  get size(): number {
    return this.index.documentCount;
  }
}

/** The distinct terms of a query that are searched for; the rest are ignored (docs/agents.md says so). */
export const MAX_TERMS = 16;

const SNIPPET = 220;

/** About 220 characters of the entry's text around the first matched term (the whole start when none is in the text). */
function snippet(n: EvidenceNode, r: SearchResult): string {
  const lower = n.text.toLowerCase();
  let at = -1;
  for (const term of r.terms) {
    const i = lower.indexOf(term.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, at - 60);
  const end = Math.min(n.text.length, start + SNIPPET);
  let s = n.text.slice(start, end);
  if (start > 0) s = `…${s.replace(/^\S*\s/, '')}`;
  if (end < n.text.length) s = `${s.replace(/\s\S*$/, '')}…`;
  return s.replace(/\s+/g, ' ').trim();
}
