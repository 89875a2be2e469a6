/**
 * `routes:` and `timeouts:` of config/gateway.yaml: where each route's calls go (one `origin`, or several
 * `origins` balanced by weight), how its origins are checked and ejected, and the upstream timeouts. Read by
 * compile.ts (src/config) into the route pools the call is forwarded through.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Const, EnvName, MapOf, Ms, OneOf, Strict } from '../config/schema-kit.js';

const BASE_URL = '^https?://';

const DemoOrigin = Strict({ demo: Const(true, { description: 'Served by the bundled demo upstream.' }) });

const UrlOrigin = Strict({
  baseUrl: Type.String({ pattern: BASE_URL, description: 'OpenAI-compatible base URL, e.g. http://127.0.0.1:9000/v1; /chat/completions is appended.' }),
  apiKeyEnv: Type.Optional(EnvName('Name of the environment variable holding the upstream key (the key itself never goes in YAML).')),
  connections: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096, description: 'Keep-alive connections in the pool to this origin.' })),
});

export const OriginSchema = OneOf([DemoOrigin, UrlOrigin]);

/** One of several origins of a route, with its share of the calls. */
export const WeightedOriginSchema = Strict({
  baseUrl: Type.String({ pattern: BASE_URL, description: 'OpenAI-compatible base URL; /chat/completions is appended.' }),
  apiKeyEnv: Type.Optional(EnvName("Name of the environment variable holding this origin's key.")),
  connections: Type.Optional(Type.Integer({ minimum: 1, maximum: 4096 })),
  weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Share of the calls (default 1).' })),
  name: Type.Optional(Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$', description: 'Name on receipts and metrics (default origin-<n>).' })),
});
export type WeightedOrigin = Static<typeof WeightedOriginSchema>;

/** A route: one `origin` (the single form) or several `origins`, and how the gateway balances them. */
export const RouteSchema = Strict(
  {
    origin: Type.Optional(OriginSchema),
    coldStartMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        description:
          'How long a call keeps retrying an origin that refuses connections (still starting), with backoff, before 502 upstream-unavailable. Default: 180000 (3 minutes), or half of timeouts.syncWaitMs when that is shorter; it must be below timeouts.syncWaitMs.',
      }),
    ),
    origins: Type.Optional(
      Type.Array(WeightedOriginSchema, {
        minItems: 1,
        maxItems: 64,
        description: 'Several origins, balanced by weight, failed over in order (instead of `origin`).',
      }),
    ),
    healthCheck: Type.Optional(
      Strict({
        path: Type.Optional(Type.String({ pattern: '^/', description: 'Relative to the base URL; default /models.' })),
        intervalMs: Ms(),
        timeoutMs: Type.Optional(Ms()),
      }),
    ),
    ejection: Type.Optional(
      Strict({
        consecutiveFailures: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Failures in a row that eject an origin (default 3).' })),
        ejectMs: Type.Optional(Ms()),
      }),
    ),
    timeouts: Type.Optional(
      Strict(
        { connectMs: Type.Optional(Ms()), headersMs: Type.Optional(Ms()), bodyMs: Type.Optional(Ms()) },
        { description: "This route's upstream timeouts (default: the gateway's timeouts.upstream*)." },
      ),
    ),
    models: MapOf(
      Strict({
        upstreamModel: Type.Optional(Type.String({ minLength: 1, description: 'Model id sent upstream and expected back; defaults to the catalog id.' })),
        fallbackModel: Type.Optional(
          Type.String({ minLength: 1, description: 'A catalog model served on another route that answers when every origin of this route fails.' }),
        ),
      }),
      { description: 'Catalog ids this origin serves; a model of the route not named here is `route not configured`.' },
    ),
  },
  // The single form or the list, never both and never neither.
  {
    oneOf: [
      { properties: { origin: true }, required: ['origin'] },
      { properties: { origins: true }, required: ['origins'] },
    ],
  },
);
export type RouteConfig = Static<typeof RouteSchema>;

export const RoutesSchema = MapOf(RouteSchema, { namePattern: '^[a-z][a-z0-9-]*$' });

/** The gateway's timeouts: the synchronous wait, and each upstream phase (a route may override the latter). */
export const TimeoutsSchema = Strict({
  syncWaitMs: Ms(),
  upstreamConnectMs: Ms(),
  upstreamHeadersMs: Ms(),
  upstreamBodyMs: Ms(),
});
