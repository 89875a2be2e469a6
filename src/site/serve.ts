/**
 * Serving a generated document or JSON answer with an ETag: a client that sends the same `if-none-match`
 * gets 304 and no body. Everything on the site is public and the same for every caller.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { TextDocument } from './entry-points.js';

/** Whether the client already holds this version (its `if-none-match` names the etag): a 304 costs nothing. */
export function holdsVersion(ctx: Context, etag: string): boolean {
  ctx.etag = etag;
  ctx.status = 200;
  return ctx.fresh;
}

export function serveDocument(ctx: Context, d: TextDocument): void {
  send(ctx, d.text, d.type, d.etag);
}

export function serveJson(ctx: Context, value: unknown): void {
  const text = JSON.stringify(value);
  send(ctx, text, 'application/json; charset=utf-8', `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`);
}

function send(ctx: Context, text: string, type: string, etag: string): void {
  ctx.set('cache-control', 'public, max-age=300');
  ctx.set('access-control-allow-origin', '*');
  ctx.etag = etag;
  ctx.status = 200;
  // Koa's `fresh` compares if-none-match with the etag just set.
  if (ctx.fresh) {
    ctx.status = 304;
    return;
  }
  ctx.type = type;
  ctx.body = text;
}
