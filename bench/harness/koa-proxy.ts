/**
 * Row R2 of the bench: R1's forwarding inside Koa (koa-compose pipeline, @koa/router route, ctx objects,
 * Koa's response handling), so the difference R2 - R1 is the framework's own cost.
 *
 *   UPSTREAM=http://127.0.0.1:<mock>/v1 PORT=0 node --import tsx bench/harness/koa-proxy.ts
 *
 * Prints `listening <port>` once ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { Router } from '@koa/router';
import { Pool } from 'undici';

const upstream = new URL(process.env['UPSTREAM'] ?? 'http://127.0.0.1:9000/v1');
const chatPath = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;
const pool = new Pool(upstream.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });

const app = new Koa({ proxy: false });
const router = new Router();
router.post('/v1/chat/completions', async (ctx) => {
  const headers: Record<string, string> = { 'content-type': ctx.get('content-type') || 'application/json' };
  const length = ctx.get('content-length');
  if (length) headers['content-length'] = length;
  const res = await pool.request({ method: 'POST', path: chatPath, headers, body: ctx.req });
  ctx.status = res.statusCode;
  ctx.type = String(res.headers['content-type'] ?? 'application/json');
  // A client that goes away mid-answer makes Koa destroy the body; undici then emits an error nobody
  // else listens to.
  res.body.on('error', () => undefined);
  ctx.body = res.body;
});
app.use(router.routes());
app.use(router.allowedMethods());

const callback = app.callback();
// koa answers its own errors (ctx.onerror), so the promise never rejects and nothing waits on it.
const server = createServer((req, res) => void callback(req, res));
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => void pool.close().then(() => process.exit(0)));
});
