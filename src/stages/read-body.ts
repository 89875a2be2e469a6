/**
 * readBody: the chat and jobs pipelines' first stage. A body that cannot be read cannot be admitted, so this
 * runs first: JSON only (415), at most `limits.bodyBytes` (2 MiB by default; 413), valid JSON (400), read by
 * src/http/read-json.ts like every other POST body.
 */
import type { Context, Next } from 'koa';
import { readJson } from '../http/read-json.js';
import type { Call } from '../call/call.js';

// The tests of the body reader import it from here, where it was first written.
export { readJson };

/** Koa stage: parses the JSON body of a POST into `ctx.state.call.body`. */
export function readBody(limitBytes: () => number) {
  return async function readBody(ctx: Context, next: Next): Promise<void> {
    (ctx.state.call as Call).body = await readJson(ctx, limitBytes());
    await next();
  };
}
