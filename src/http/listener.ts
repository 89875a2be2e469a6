/**
 * Every listener's `http.Server`, hardened the same way.
 * Each bound is there because a client can otherwise hold a file descriptor and memory for free:
 *
 * - headersTimeoutMs: the whole request head must arrive in this time (a slowloris client trickling header
 *   bytes is cut off).
 * - requestTimeoutMs: the whole request, head and body, must arrive in this time. Only the receiving is timed:
 *   once the request is in, the synchronous wait (14 minutes) runs under its own clock.
 * - bodyIdleMs: a declared body that stops arriving is cut after this much silence, so a stalled body costs
 *   seconds, not the whole request timeout.
 * - keepAliveMs: an idle keep-alive connection is closed after this long (longer than a balancer's usual
 *   60 s idle, so the balancer closes first and never sends on a connection we are closing).
 * - maxHeaderBytes / maxHeadersCount: a bounded head (431 above the size; headers past the count ignored).
 * - maxConnections: connections past it are refused at accept, so descriptors remain for Redis and upstreams.
 *
 * Clients that break these (or send bytes that are not HTTP) are answered `{error:{code,message}}` where a
 * response can still be written, and logged as one JSON line at debug level through a per-event budget: a
 * client must not be able to flood the log. The Koa app's own `error` events (a client that went away while
 * its answer was written) are logged the same way instead of Koa's multi-line stack on stderr.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type Koa from 'koa';
import { ERRORS, type ErrorCode } from '../errors.js';
import type { HttpBounds } from '../config/types.js';
import type { Logger } from '../log.js';
import { quietLog } from './quiet-log.js';
import type { Lifecycle } from './lifecycle.js';
import { healthRoutes, type ReadinessProbe, type ScrapeCheck } from './health.js';
import { requestContext } from './request-context.js';

export const HTTP_DEFAULTS: Required<HttpBounds> = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  bodyIdleMs: 5_000,
  keepAliveMs: 65_000,
  maxHeaderBytes: 16_384,
  maxHeadersCount: 100,
  maxConnections: 4_096,
};

export interface ListenerOptions {
  /** The listener's name (api, admin, ...), for logs and metrics. */
  name: string;
  bounds?: HttpBounds | undefined;
  log: Logger;
  /** The process's life (draining, requests in flight), shared by every listener. */
  lifecycle: Lifecycle;
  /** What `GET /readyz` checks. */
  probe: ReadinessProbe;
  /** Serve `GET /metrics` here (the admin listener). */
  metrics?: boolean;
  /** Who may read /metrics (health.ts scrapeCheck); nobody without it. */
  mayScrape?: ScrapeCheck;
}

/** Errors a client causes by going away: expected, never our bug. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/** A whole HTTP/1.1 error response, for sockets Koa never saw (the head could not be parsed or timed out). */
function rawError(code: ErrorCode): string {
  const body = JSON.stringify({ error: { code, message: ERRORS[code].message } });
  const status = ERRORS[code].status;
  const reason = status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

function clientErrorCode(err: NodeJS.ErrnoException): ErrorCode {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request-timeout';
  if (err.code === 'HPE_HEADER_OVERFLOW') return 'headers-too-large';
  return 'bad-request';
}

/** A request whose declared body is still arriving: what the body watch knows of it. */
interface Watched {
  req: IncomingMessage;
  res: ServerResponse;
  seen: number;
  quietSince: number;
  watch: BodyWatch;
}

const WATCHED = Symbol('body watch');

/** The request's 'end' and 'close' listener, one function for every request: the watch is over. */
function unwatch(this: IncomingMessage): void {
  const w = (this as IncomingMessage & { [WATCHED]?: Watched })[WATCHED];
  w?.watch.remove(w);
}

/**
 * Cuts a request whose declared body goes silent for `idleMs`. Progress is read from the socket's byte count,
 * so the body stream is never touched (it stays for the route to read). The request is answered 408 when no
 * answer has started, and its connection closed. One timer per listener looks at every request whose body
 * is still arriving, every quarter of `idleMs` (a timer and its closures per request were a per-call cost).
 */
class BodyWatch {
  readonly #watched = new Set<Watched>();
  readonly #idleMs: number;
  readonly #onCut: (req: IncomingMessage) => void;
  readonly #timer: NodeJS.Timeout;

  constructor(idleMs: number, onCut: (req: IncomingMessage) => void) {
    this.#idleMs = idleMs;
    this.#onCut = onCut;
    this.#timer = setInterval(() => this.#sweep(), Math.max(50, Math.floor(idleMs / 4)));
    this.#timer.unref();
  }

  add(req: IncomingMessage, res: ServerResponse): void {
    if (req.complete) return;
    const w: Watched = { req, res, seen: req.socket.bytesRead, quietSince: Date.now(), watch: this };
    (req as IncomingMessage & { [WATCHED]?: Watched })[WATCHED] = w;
    this.#watched.add(w);
    // 'end' (the body was read) or 'close': either way the watch is over. Listening to 'end' does not start
    // the body flowing; it stays for the route to read.
    req.on('end', unwatch);
    req.on('close', unwatch);
  }

  remove(w: Watched): void {
    this.#watched.delete(w);
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#watched.clear();
  }

  #sweep(): void {
    const now = Date.now();
    for (const w of this.#watched) {
      const { req, res } = w;
      const socket = req.socket;
      if (req.complete || socket.destroyed) {
        this.#watched.delete(w);
        continue;
      }
      if (socket.bytesRead !== w.seen) {
        w.seen = socket.bytesRead;
        w.quietSince = now;
        continue;
      }
      if (now - w.quietSince < this.#idleMs) continue;
      this.#watched.delete(w);
      this.#onCut(req);
      if (!res.headersSent) {
        const body = JSON.stringify({ error: { code: 'request-timeout', message: ERRORS['request-timeout'].message } });
        res.writeHead(408, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
        res.end(body, () => socket.destroy());
      } else {
        socket.destroy();
      }
    }
  }
}

const ANSWERING = Symbol('answers under way');

/** The response's 'finish' and 'close' listener: its answer is no longer under way on its connection. */
function answered(this: ServerResponse): void {
  (this as ServerResponse & { [ANSWERING]?: Set<ServerResponse> })[ANSWERING]?.delete(this);
}

/**
 * A hardened server, bound before its app exists (apps need the bound origins). `front` is what every
 * listener runs ahead of its host's own middleware; the host's app `use`s it first (src/app/host-app.ts),
 * so an app's middleware order is read in one place. `serve` then attaches the finished app.
 */
export interface Listener {
  server: Server;
  /** Outermost first: the request id, the request line and metrics (request-context.ts); then health. */
  readonly front: readonly Koa.Middleware[];
  serve(app: Koa): void;
  /** The app served, once `serve` was called (its routers say what this listener answers). */
  readonly app: Koa | null;
}

export function createListener(opts: ListenerOptions): Listener {
  const b = { ...HTTP_DEFAULTS, ...opts.bounds };
  const quiet = quietLog(opts.log);
  const listener = opts.name;
  let handler: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  let served: Koa | null = null;

  const server = createServer(
    {
      maxHeaderSize: b.maxHeaderBytes,
      headersTimeout: Math.min(b.headersTimeoutMs, b.requestTimeoutMs),
      requestTimeout: b.requestTimeoutMs,
      keepAliveTimeout: b.keepAliveMs,
      // How often Node checks the two timeouts above (default 30 s, which would stretch a 10 s bound to 40 s).
      connectionsCheckingInterval: Math.max(100, Math.min(1_000, Math.floor(b.headersTimeoutMs / 4))),
    },
    (req, res) => {
      if (handler) return handler(req, res);
      // Bound but not yet serving (start-up builds the apps after every port is bound).
      const body = JSON.stringify({ error: { code: 'not-ready', message: ERRORS['not-ready'].message } });
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'retry-after': '1' }).end(body);
    },
  );
  server.keepAliveTimeout = b.keepAliveMs;
  server.maxHeadersCount = b.maxHeadersCount;
  server.maxConnections = b.maxConnections;
  // The server refuses connections past the cap at accept; this line says why a client was refused.
  server.on('drop', () => quiet('warn', 'http.connection_refused', { listener, reason: 'maxConnections', maxConnections: b.maxConnections }));

  // The answers under way on each connection: a client error on a connection whose answer has begun must not
  // write a second one into it (Node's own default handler makes the same check on its private fields).
  const answering = new WeakMap<Duplex, Set<ServerResponse>>();
  const bodies = new BodyWatch(b.bodyIdleMs, (req) => quiet('debug', 'http.body_stalled', { listener, method: req.method ?? '' }));
  server.on('close', () => bodies.stop());
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let open = answering.get(req.socket);
    if (!open) answering.set(req.socket, (open = new Set()));
    open.add(res);
    (res as ServerResponse & { [ANSWERING]?: Set<ServerResponse> })[ANSWERING] = open;
    res.on('finish', answered);
    res.on('close', answered);
    bodies.add(req, res);
  });

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const code = clientErrorCode(err);
    if (err.code && CLIENT_GONE.has(err.code)) quiet('debug', 'http.client_gone', { listener, code: err.code });
    else quiet('debug', 'http.client_error', { listener, code, cause: err.code ?? null });
    // Write an answer only when nothing of one is on the wire yet (Node's own default does the same check).
    const begun = [...(answering.get(socket) ?? [])].some((res) => res.headersSent);
    if (socket.writable && !(err.code && CLIENT_GONE.has(err.code)) && !begun) {
      socket.end(rawError(code));
      setTimeout(() => socket.destroy(), 1_000).unref();
    } else {
      socket.destroy();
    }
  });

  const front = [requestContext(listener, opts.log, opts.lifecycle), healthRoutes(opts.probe, opts.metrics ?? false, opts.mayScrape)];

  return {
    server,
    front,
    serve(app: Koa) {
      // Koa writes a multi-line stack to stderr for an `error` event nobody listens to; this is that listener.
      app.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code && CLIENT_GONE.has(err.code)) quiet('debug', 'http.client_gone', { listener, code: err.code });
        else if (err.message === 'aborted') quiet('debug', 'http.client_gone', { listener, code: 'aborted' });
        else quiet('error', 'http.response_failed', { listener, error: err.name, code: err.code ?? null });
      });
      const callback = app.callback();
      // koa answers its own errors (ctx.onerror), so the promise never rejects and nothing waits on it.
      handler = (req, res) => void callback(req, res);
      served = app;
    },
    get app() {
      return served;
    },
  };
}

/** A listener that could not bind: said in one line by `npm start`, not as a stack trace. */
export class ListenError extends Error {
  constructor(
    readonly listener: string,
    readonly host: string,
    readonly port: number,
    cause: NodeJS.ErrnoException,
  ) {
    const why =
      cause.code === 'EADDRINUSE'
        ? 'the port is taken (another portcullis, or another program, is listening there)'
        : cause.code === 'EACCES'
          ? 'permission denied (ports below 1024 need privileges)'
          : cause.code === 'EADDRNOTAVAIL'
            ? "the address is not one of this machine's"
            : (cause.code ?? cause.message);
    const env = `PORTCULLIS_${listener.toUpperCase()}_PORT`;
    super(
      `portcullis: the ${listener} listener cannot bind ${host}:${port}: ${why}; choose another port with ${env} or listeners.${listener}.port in config/gateway.yaml`,
      { cause },
    );
    this.name = 'ListenError';
  }
}
