/**
 * Cross-origin calls from the console. The console's pages live on their own origin ({console_url}) and call
 * the API and auth hosts with the session cookie, so those hosts answer the console origin — and only it —
 * with credentialed CORS (`access-control-allow-origin: <console origin>`, `allow-credentials: true`) and
 * answer its preflights. Any other origin gets no CORS headers, so a browser keeps its pages from reading
 * the answers; the cookie routes' same-origin check refuses its POSTs besides.
 */
import type { Context, Next } from 'koa';

export function consoleCors(consoleOrigin: string) {
  // Not async: it does no I/O, and every call passes through it (an async layer costs a promise per call).
  return function consoleCors(ctx: Context, next: Next): Promise<void> | undefined {
    ctx.vary('Origin');
    if (ctx.get('origin') !== consoleOrigin) return next();
    ctx.set('access-control-allow-origin', consoleOrigin);
    ctx.set('access-control-allow-credentials', 'true');
    if (ctx.method === 'OPTIONS' && ctx.get('access-control-request-method')) {
      ctx.set('access-control-allow-methods', 'GET, POST');
      ctx.set('access-control-allow-headers', 'content-type');
      ctx.set('access-control-max-age', '600');
      ctx.status = 204;
      return;
    }
    return next();
  };
}
