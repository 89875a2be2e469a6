/**
 * Row R1 of the bench: the physical limit of a Node gateway. A bare node:http server that forwards
 * `POST /v1/chat/completions` to the mock upstream over an undici Pool (keep-alive, the same pool settings
 * portcullis gives a route: 64 connections, no pipelining) and streams the answer back: no parsing, no
 * framework, no policy — only the two HTTP hops every gateway pays for.
 *
 *   UPSTREAM=http://127.0.0.1:<mock>/v1 PORT=0 [WORKERS=N] node --import tsx bench/harness/bare-proxy.ts
 *
 * Prints `listening <port>` once ready. `WORKERS=N` (N > 1) runs N such processes on one port through
 * node:cluster, as portcullis runs its workers (src/workers.ts): R1 at the same number of processes as R3.
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';
import { pipeline } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const workers = Number(process.env['WORKERS'] ?? '1');
if (cluster.isPrimary && workers > 1) {
  // The primary only forks and reports the port once every worker listens (they share it: port 0 is chosen
  // once, by the primary, for all of them).
  let listening = 0;
  cluster.setupPrimary({ stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  cluster.on('listening', (_w, address) => {
    if (++listening === workers) process.stdout.write(`listening ${address.port}\n`);
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
    cluster.on('exit', () => Object.keys(cluster.workers ?? {}).length === 0 && process.exit(0));
  });
} else {
  serve();
}

function serve(): void {
  const upstream = new URL(process.env['UPSTREAM'] ?? 'http://127.0.0.1:9000/v1');
  const chatPath = `${upstream.pathname.replace(/\/$/, '')}/chat/completions`;
  const pool = new Pool(upstream.origin, { connections: 64, pipelining: 1, keepAliveTimeout: 30_000 });

  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const headers: Record<string, string> = { 'content-type': req.headers['content-type'] ?? 'application/json' };
    if (req.headers['content-length']) headers['content-length'] = req.headers['content-length'];
    pool
      .request({ method: 'POST', path: chatPath, headers, body: req })
      .then(({ statusCode, headers: h, body }) => {
        res.writeHead(statusCode, { 'content-type': String(h['content-type'] ?? 'application/json') });
        pipeline(body, res, () => undefined); // a client gone mid-answer destroys both sides
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"upstream-unavailable"}}');
      });
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => void pool.close().then(() => process.exit(0)));
  });
}
