/**
 * `GET /openapi.json` on the API host: the document of document.ts for the routes the API app serves, built
 * once per app (it depends only on the code: the routes, the request schemas and the error table). document.ts
 * (its tables of operations and schemas) is imported by the first request for it, not at start.
 */
import { readFileSync } from 'node:fs';
import type Koa from 'koa';
import type { Context } from 'koa';

export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The document of an API app. */
export async function openApiDocument(app: Koa): Promise<Record<string, unknown>> {
  const { buildOpenApi } = await import('./document.js');
  return buildOpenApi(packageVersion(), appRoutes(app));
}

/** The route; `app` is the API app it is mounted on (read at the first request, once every route is in). */
export function serveOpenApi(app: () => Koa) {
  let built: Promise<Record<string, unknown>> | undefined;
  return async function openApi(ctx: Context): Promise<void> {
    ctx.body = await (built ??= openApiDocument(app()));
  };
}

/**
 * `METHOD /path/{param}` for every route of the routers mounted on `app` (HEAD, which GET implies, left out),
 * with @koa/router's `:id` and `{*rest}` parameters written the OpenAPI way.
 */
export function appRoutes(app: Koa): string[] {
  const out = new Set<string>();
  for (const mw of app.middleware) {
    const router = (mw as unknown as { router?: { stack: Array<{ path: string; methods: string[] }> } }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\{\*([A-Za-z0-9_]+)\}/g, '{$1}');
      for (const m of layer.methods) if (m !== 'HEAD') out.add(`${m} ${path}`);
    }
  }
  return [...out].sort();
}
