/**
 * Serving the pages (web/, built by scripts/web-build.mjs into web/dist/): the sign-in page on the auth
 * host, the console on the console host, and their assets. The HTML is a template whose one placeholder is
 * the deployment's public origins (a <meta> the page scripts read), filled once per app, so the pages never
 * guess where the API is.
 *
 * Every answer carries a strict Content-Security-Policy (scripts and styles only from this origin, no inline
 * script, fetches only to this deployment's API and auth origins, `frame-ancestors 'none'`), nosniff, and
 * a same-origin referrer policy. Assets are revalidated by ETag (their names carry no hash).
 */
import { createHash } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Next } from 'koa';
import type { HostName } from '../config/types.js';

/** web/dist, from src/pages or dist/pages alike (both two folders below the package root). */
export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
};

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

function asset(body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

function escapeAttribute(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function contentSecurityPolicy(origins: Record<HostName, string>): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${origins.api} ${origins.auth}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * Koa middleware serving `pages` (path -> HTML file of web/dist) and /assets/*. Anything else falls
 * through to the host's routes. When the pages were never built, they answer 503 saying how to build them.
 */
export function servePages(pages: Record<string, string>, origins: Record<HostName, string>) {
  const csp = contentSecurityPolicy(origins);
  const publicOrigins = JSON.stringify({ api: origins.api, auth: origins.auth, console: origins.console, site: origins.site });
  const cache = new Map<string, Asset | null>();
  const load = (file: string): Asset | null => {
    if (cache.has(file)) return cache.get(file)!;
    const path = join(WEB_DIST, file);
    let found: Asset | null = null;
    if (existsSync(path)) {
      const raw = readFileSync(path);
      const type = TYPES[extname(file)] ?? 'application/octet-stream';
      found = type.startsWith('text/html')
        ? asset(Buffer.from(raw.toString('utf8').replace('%ORIGINS%', escapeAttribute(publicOrigins))), type)
        : asset(raw, type);
    }
    cache.set(file, found);
    return found;
  };

  return async function servePage(ctx: Context, next: Next): Promise<void> {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      await next();
      return;
    }
    let file: string | undefined = pages[ctx.path];
    if (!file && ctx.path.startsWith('/assets/')) {
      const rel = normalize(ctx.path.slice(1));
      if (rel.startsWith('assets/') && !rel.includes('..')) file = rel;
    }
    if (!file) {
      await next();
      return;
    }
    const found = load(file);
    ctx.set('content-security-policy', csp);
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('referrer-policy', 'same-origin');
    ctx.set('cross-origin-opener-policy', 'same-origin');
    if (!found) {
      if (!file.startsWith('assets/')) {
        ctx.status = 503;
        ctx.type = 'text/plain';
        ctx.body = 'The pages are not built: run `npm run build` (or `node scripts/web-build.mjs`).\n';
        return;
      }
      await next();
      return;
    }
    ctx.set('cache-control', 'no-cache');
    ctx.set('etag', found.etag);
    if (ctx.get('if-none-match') === found.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = found.type;
    ctx.body = found.body;
  };
}
