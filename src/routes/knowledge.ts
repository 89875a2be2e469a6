/**
 * GET /v1/knowledge/search and GET /v1/knowledge/context (public, CORS open): ranked search over the
 * evidence and one entry's full text with its typed relations. No credential is read or honoured here,
 * so any page may call them: `access-control-allow-origin: *`, never `allow-credentials`.
 */
import type { Context, Next } from 'koa';
import type { Knowledge } from '../knowledge/index.js';
import { mustFind } from '../knowledge/graph.js';
import { readContextQuery, readSearchQuery } from '../knowledge/schemas.js';

/** Request headers a cross-origin page may send; credentials (authorization, cookie) are not among them. */
const ALLOWED_HEADERS = 'accept, content-type, if-none-match';

/** Open CORS: every answer (errors too) carries `*`; a preflight is answered 204 here and goes no further. */
export function openCors() {
  return async function openCors(ctx: Context, next: Next): Promise<void> {
    ctx.set('access-control-allow-origin', '*');
    if (ctx.method === 'OPTIONS') {
      ctx.set('access-control-allow-methods', 'GET, OPTIONS');
      ctx.set('access-control-allow-headers', ALLOWED_HEADERS);
      ctx.set('access-control-max-age', '86400');
      ctx.status = 204;
      return;
    }
    await next();
  };
}

/** The data changes only with a new deployment: clients and caches may keep an answer for an hour. */
const CACHE = 'public, max-age=3600';

export function knowledgeSearch(knowledge: () => Knowledge) {
  return function knowledgeSearch(ctx: Context): void {
    const p = readSearchQuery(ctx.query);
    const page = knowledge().search.search(p.q, { limit: p.limit, offset: p.offset, ...(p.kind ? { kind: p.kind } : {}) });
    ctx.set('cache-control', CACHE);
    ctx.body = { object: 'list', query: p.q, kind: p.kind ?? null, total: page.total, offset: p.offset, limit: p.limit, data: page.data };
  };
}

/** At most this many relations in one answer; an entry with more says so (`relationsTotal`) and the graph server walks the rest. */
const MAX_RELATIONS = 500;

export function contextAnswer(k: Knowledge, id: string) {
  const n = mustFind(k.evidence, id);
  const all = k.evidence.relations.get(n.id) ?? [];
  const relations = all.slice(0, MAX_RELATIONS).map((r) => {
    const other = k.evidence.nodes.get(r.id)!;
    return { type: r.type, direction: r.direction, id: other.id, kind: other.kind, title: other.title };
  });
  const { id: _id, kind, title, text, source, url, ...facts } = n;
  return { id: n.id, kind, title, text, source, url: url ?? null, ...facts, relationsTotal: all.length, relations };
}

export function knowledgeContext(knowledge: () => Knowledge) {
  return function knowledgeContext(ctx: Context): void {
    const p = readContextQuery(ctx.query);
    ctx.set('cache-control', CACHE);
    ctx.body = contextAnswer(knowledge(), p.id);
  };
}
