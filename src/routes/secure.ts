/**
 * GET /v1/secure (public, API listener): the rules the gateway runs under, for compliance reviewers
 * (secure/document.ts builds the body). The answer carries a strong ETag — the SHA-256 of the exact body —
 * and `If-None-Match` with it answers 304 without a body, so a reviewer's tooling can poll cheaply and
 * knows that anything else means something changed. `cache-control: no-cache`: always revalidate.
 *
 * Reading the history is one store round trip; with the store down this answers 503 store-unavailable
 * rather than a body without its history.
 */
import type { Context } from 'koa';
import { createHash } from 'node:crypto';
import type { RuntimeHolder } from '../config/reloader.js';
import type { HistoryRecorder } from '../secure/recorder.js';
import { secureBody } from '../secure/document.js';
import type { Receipts } from '../receipts/service.js';

/** If-None-Match uses the weak comparison (RFC 9110 13.1.2): `W/` is ignored, `*` matches any. */
function notModified(header: string, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

export function secure(holder: RuntimeHolder, receipts: Pick<Receipts, 'publicInfo'>, history: HistoryRecorder) {
  return async function secure(ctx: Context): Promise<void> {
    const runtime = holder.current;
    const body = JSON.stringify(secureBody(runtime, await history.history(runtime), receipts.publicInfo()));
    const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
    ctx.set('etag', etag);
    ctx.set('cache-control', 'no-cache');
    if (notModified(ctx.get('if-none-match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = body;
  };
}
