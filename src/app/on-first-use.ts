/**
 * A route whose code is imported by its first request, not at start: the MCP SDK and what the
 * MCP servers and the discovery documents pull in are about 25 MiB of RSS that a gateway nobody talks MCP
 * to never needs. The import runs once; every later request reuses the middleware it built. The first
 * caller waits for the import and gets the same answer.
 */
import type { Middleware } from 'koa';

export function onFirstUse(load: () => Promise<Middleware>): Middleware {
  let loaded: Promise<Middleware> | null = null;
  return async (ctx, next) => {
    const middleware = await (loaded ??= load());
    await middleware(ctx, next);
  };
}
