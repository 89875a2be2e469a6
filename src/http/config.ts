/**
 * The listeners' sections of config/gateway.yaml: where each host listens (`listeners`), the bounds every
 * listener holds its clients to (`http`, read by listener.ts; defaults there), graceful shutdown (`shutdown`,
 * read by shutdown.ts) and who may read /metrics (`metrics`, read by health.ts).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Ms, Strict } from '../config/schema-kit.js';

/** The hosts of the spec, each its own listener (docs/decisions.md: "a route answers only on its host"). */
export const HOST_NAMES = ['api', 'auth', 'console', 'site', 'graph', 'admin'] as const;
export type HostName = (typeof HOST_NAMES)[number];

export const ListenerSchema = Strict({
  host: Type.String({ minLength: 1 }),
  port: Type.Integer({ minimum: 0, maximum: 65535, description: '0 picks a free port.' }),
  url: Type.Optional(
    Type.String({
      pattern: '^https?://[^/?#]+$',
      description: 'Public origin of this host (scheme, host, optional port; no path). Defaults to http://localhost:<bound port>.',
    }),
  ),
});

export const ListenersSchema = Strict(Object.fromEntries(HOST_NAMES.map((name) => [name, ListenerSchema])) as Record<HostName, typeof ListenerSchema>);

export const HttpBoundsSchema = Strict(
  {
    headersTimeoutMs: Type.Optional(Ms({ description: 'Time a client has to send the whole request head (default 10000). Cuts slowloris clients.' })),
    requestTimeoutMs: Type.Optional(
      Ms({
        description:
          "Time a client has to send the whole request, head and body (default 60000). Not the answer's time: the synchronous wait starts once the request is in.",
      }),
    ),
    bodyIdleMs: Type.Optional(
      Ms({ description: 'Longest silence while a declared body is still arriving (default 5000): a stalled body is cut within seconds.' }),
    ),
    keepAliveMs: Type.Optional(
      Ms({
        description:
          "How long an idle keep-alive connection is kept (default 65000: longer than common load balancers' 60 s idle, so the balancer closes first).",
      }),
    ),
    maxHeaderBytes: Type.Optional(Type.Integer({ minimum: 1024, description: 'Largest request head in bytes (default 16384); larger is answered 431.' })),
    maxHeadersCount: Type.Optional(Type.Integer({ minimum: 8, description: 'Most request headers read (default 100); the rest are ignored.' })),
    maxConnections: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Most open connections per listener (default 4096); more are refused at accept, so file descriptors stay for the store and upstreams.',
      }),
    ),
  },
  { description: 'Bounds on every listener (src/http/listener.ts). Each is optional; the defaults are in the descriptions.' },
);
export type HttpBounds = Static<typeof HttpBoundsSchema>;

export const ShutdownSchema = Strict(
  {
    drainDelayMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          "Time between readiness going false and the listeners closing (default 0). Set it to the balancer's health-check interval times its failure threshold, so it stops sending before the port closes.",
      }),
    ),
    graceMs: Type.Optional(
      Ms({
        description:
          'Time in-flight requests and running jobs get to finish once the listeners have closed (default 30000). Jobs still running then are stopped and settled (503 job-interrupted to their callers), nothing charged for them.',
      }),
    ),
  },
  { description: 'Graceful shutdown on SIGTERM (src/http/shutdown.ts).' },
);

export const MetricsSchema = Strict(
  {
    scrapeTokenSha256: Type.Optional(
      Type.String({
        pattern: '^[0-9a-f]{64}$',
        description:
          'The SHA-256 (lower-case hex) of a token a scraper may use instead of the operator token: printf %s "$TOKEN" | sha256sum. The token itself is never in the configuration.',
      }),
    ),
  },
  { description: 'GET /metrics on the admin listener needs Authorization: Bearer with the operator token or a scrape token (src/http/health.ts).' },
);
