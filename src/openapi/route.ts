/**
 * `GET /openapi.json` on the API host: the document of document.ts, built once per process (it depends only
 * on the code: the request schemas and the error table), and the list of routes an app serves, which the
 * document test holds against the document's paths.
 */
import { readFileSync } from 'node:fs';
import type Koa from 'koa';
import type { Context } from 'koa';
import { buildOpenApi } from './document.js';

let built: Record<string, unknown> | undefined;

export function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export function openApiDocument(): Record<string, unknown> {
  built ??= buildOpenApi(packageVersion());
  return built;
}

export function serveOpenApi() {
  return async function openApi(ctx: Context): Promise<void> {
    ctx.body = openApiDocument();
  };
}

/** `METHOD /path/{param}` for every route of the routers mounted on `app` (HEAD, which GET implies, left out). */
export function appRoutes(app: Koa): string[] {
  const out = new Set<string>();
  for (const mw of app.middleware) {
    const router = (mw as unknown as { router?: { stack: Array<{ path: string; methods: string[] }>; opts?: { prefix?: string } } }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      const path = layer.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      for (const m of layer.methods) if (m !== 'HEAD') out.add(`${m} ${path}`);
    }
  }
  return [...out].sort();
}
