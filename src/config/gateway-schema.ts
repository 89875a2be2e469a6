/**
 * The schema of config/gateway.yaml, assembled from the sections, each declared beside the code that reads
 * it (Kong's schema.lua beside handler.lua): listeners, http, shutdown and metrics in src/http/config.ts, the
 * store in src/store/config.ts, routes and timeouts in src/upstream/config.ts, and so on down the list below.
 * Only what belongs to no one capability is declared here (the version, the principal domain, the request
 * limits, the demo switch).
 *
 * The gateway's TypeScript type is derived from it (`GatewayDoc`), so the two cannot drift; the loader
 * validates the file against it; config/gateway.schema.json, which an operator's editor reads, is written
 * from it (`npx tsx scripts/config-schema.ts`; test/config/schema-file.test.ts keeps the two in step).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Strict } from './schema-kit.js';
import { HttpBoundsSchema, ListenersSchema, MetricsSchema, ShutdownSchema } from '../http/config.js';
import { StoreSchema } from '../store/config.js';
import { SessionsSchema } from '../sessions/config.js';
import { PasskeysSchema } from '../passkeys/config.js';
import { TotpSchema } from '../totp/config.js';
import { RecoverySchema } from '../recovery/config.js';
import { RateLimitsSchema } from '../ratelimit/config.js';
import { GraphSchema } from '../mcp/config.js';
import { JobsSchema } from '../jobs/config.js';
import { ReceiptsSchema } from '../receipts/config.js';
import { PolicySettingsSchema } from '../decisions/config.js';
import { WalletSchema } from '../wallet/config.js';
import { AdminSchema } from '../app/admin-config.js';
import { RoutesSchema, TimeoutsSchema } from '../upstream/config.js';

/** The bounds of a request's size and of an answer's, read by the stages. */
const LimitsSchema = Strict({
  bodyBytes: Type.Integer({ minimum: 1024 }),
  defaultMaxTokens: Type.Integer({ minimum: 1 }),
  applicationBytes: Type.Optional(
    Type.Integer({
      minimum: 1024,
      description: 'The largest research application body (POST /v1/research/applications); a larger one is 413 payload-too-large. Default: limits.bodyBytes.',
    }),
  ),
  upstreamAnswerBytes: Type.Optional(
    Type.Integer({
      minimum: 1024,
      description: 'The largest answer body read from an upstream (default 8 MiB). A larger one is cut off and answered 502 `upstream-answer-too-large`.',
    }),
  ),
});

const DemoSchema = Strict({
  bootstrap: Type.Optional(Type.Boolean({ description: 'Create a demo blue-team principal at start-up and print a fresh PAT for it.' })),
});

export const GatewaySchema = Strict(
  {
    version: Type.String({ pattern: '^[0-9A-Za-z][0-9A-Za-z.+-]*$' }),
    principalDomain: Type.String({ pattern: '^[a-z0-9.-]+$' }),
    listeners: ListenersSchema,
    store: StoreSchema,
    sessions: SessionsSchema,
    passkeys: PasskeysSchema,
    totp: TotpSchema,
    recovery: RecoverySchema,
    limits: LimitsSchema,
    rateLimits: Type.Optional(RateLimitsSchema),
    metrics: Type.Optional(MetricsSchema),
    graph: Type.Optional(GraphSchema),
    shutdown: Type.Optional(ShutdownSchema),
    http: Type.Optional(HttpBoundsSchema),
    timeouts: TimeoutsSchema,
    jobs: JobsSchema,
    demo: Type.Optional(DemoSchema),
    receipts: Type.Optional(ReceiptsSchema),
    policy: Type.Optional(PolicySettingsSchema),
    wallet: Type.Optional(WalletSchema),
    admin: Type.Optional(AdminSchema),
    routes: RoutesSchema,
  },
  {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'https://portcullis.dev/schemas/config/gateway.schema.json',
    title: 'portcullis gateway configuration',
  },
);

export type GatewayDoc = Static<typeof GatewaySchema>;

/** The schema as plain JSON (TypeBox marks its schemas with symbol keys, which JSON leaves out). */
export function gatewaySchemaJson(): Record<string, unknown> {
  const { $schema, $id, title, ...rest } = JSON.parse(JSON.stringify(GatewaySchema)) as Record<string, unknown>;
  return { $schema, $id, title, ...rest }; // the file opens with what it is
}

/** config/gateway.schema.json as scripts/config-schema.ts writes it. */
export function gatewaySchemaText(): string {
  return `${JSON.stringify(gatewaySchemaJson(), null, 2)}\n`;
}
