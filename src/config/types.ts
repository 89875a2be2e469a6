/**
 * The shapes of the configuration documents, as their JSON Schemas (beside each YAML file) allow them.
 * These are plain data; `compile.ts` turns them into the runtime the gateway serves from.
 */

export type Team = 'blue' | 'red';
export type EchoRule = 'strict' | 'shape-and-content';

export interface ModelLimits {
  inputChars: number;
  outputTokens: number;
  tools: number;
  turns: number;
}

export interface CatalogModel {
  id: string;
  team: Team;
  route: string;
  tasks: string[];
  echo: EchoRule;
  limits: ModelLimits;
}

export interface ModelsDoc {
  version: string;
  models: CatalogModel[];
}

export interface Plan {
  id: string;
  name: string;
  priceMicroUSD: number;
  aiCreditsMicroUSD: number;
  storageGiB: number;
  purchasable: boolean;
}

export interface BillingDoc {
  version: string;
  currency: 'USD';
  checkoutEnabled: boolean;
  rates: {
    inputPerMTok: number;
    cachedInputPerMTok: number;
    outputPerMTok: number;
    storagePerGiBMonth: number;
    egressPerGiB: number;
  };
  plans: Plan[];
  topups: Array<{ sku: string; name: string; priceMicroUSD: number; scope: 'ai' | 'storage'; validityMonths?: number; purchasable: boolean }>;
  creditTiers: Array<{ usd: number; purchasable: boolean }>;
}

export interface Rung {
  id: string;
  level: string;
  evidence: string;
  tokensPerDay: number;
  ceilingPerDay: number;
  band: string;
  validityDays: number;
  approves: Array<{ scope: string; tasks: string[] }>;
}

export interface TeamBar {
  requiresVerification: boolean;
  requiresAup: boolean;
  requiresScope: boolean;
  maxBand: string;
}

export interface RungsDoc {
  version: string;
  bands: string[];
  tasks: Record<string, { band: string; standard: boolean; summary?: string }>;
  defaultTask: string;
  rungs: Rung[];
  teams: Record<Team, TeamBar>;
  aup: { version: string };
  freeAllowance: { perDay: number; unit: 'requests' | 'tokens' };
  verification: { screeningValidityDays: number; trustProjectionSeconds: number; screenedRungs: string[] };
}

export type OriginConfig = { demo: true } | { baseUrl: string; apiKeyEnv?: string; connections?: number };

/** One of several origins of a route, with its share of the calls. */
export type WeightedOrigin = { baseUrl: string; apiKeyEnv?: string; connections?: number; weight?: number; name?: string };

/** A route: one `origin` (the single form) or several `origins`, and how the gateway balances them. */
export interface RouteConfig {
  origin?: OriginConfig;
  origins?: WeightedOrigin[];
  /** How long a call retries an origin that refuses connections (still starting); see compile.ts. */
  coldStartMs?: number;
  /** Active checks: a GET of `path` (relative to the base URL) every `intervalMs`; under 500 is healthy. */
  healthCheck?: { path?: string; intervalMs: number; timeoutMs?: number };
  /** Passive checks: an origin failing this many calls in a row is left out for `ejectMs`. */
  ejection?: { consecutiveFailures?: number; ejectMs?: number };
  /** This route's upstream timeouts, each overriding `timeouts.upstream*` of the gateway. */
  timeouts?: { connectMs?: number; headersMs?: number; bodyMs?: number };
  /** `fallbackModel`: a catalog model on another route that answers when every origin of this one fails. */
  models: Record<string, { upstreamModel?: string; fallbackModel?: string }>;
}

/** The hosts of the spec, each its own listener (docs/decisions.md: "a route answers only on its host"). */
export const HOST_NAMES = ['api', 'auth', 'console', 'site', 'graph', 'admin'] as const;
export type HostName = (typeof HOST_NAMES)[number];

export interface Listener {
  host: string;
  port: number;
  /** Public origin; http://localhost:<bound port> when absent. */
  url?: string;
}

export interface HttpBounds {
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  bodyIdleMs?: number;
  keepAliveMs?: number;
  maxHeaderBytes?: number;
  maxHeadersCount?: number;
  maxConnections?: number;
}

/** Rate limits (src/ratelimit): requests per minute; an absent limit is off. */
export interface RateLimitSettings {
  perPrincipal?: number;
  perAddress?: number;
  failedAuthPerAddress?: number;
  /** POST /mcp on the site and graph hosts, per client address (IPv6: per /64) per minute. */
  mcpPerAddress?: number;
  /** Sign-in challenges and nonces issued, per client address (IPv6: per /64) per minute. */
  challengesPerAddress?: number;
  /** Large static answers (/llms-full.txt, /llms.txt, /docs/*.md, ...) per client address per minute. */
  staticPerAddress?: number;
  /** New accounts (any sign-in method's first sign-in) per client address (IPv6: per /64) per hour. */
  signUpsPerAddressHour?: number;
  /** Research applications per account per day. */
  applicationsPerAccountDay?: number;
  /** The header a trusted reverse proxy writes the client address into (its last entry is used). */
  addressHeader?: string;
}

export interface GatewayDoc {
  version: string;
  principalDomain: string;
  listeners: Record<HostName, Listener>;
  store: { kind: 'memory' } | { kind: 'redis'; url?: string; nodes?: string[]; prefix?: string; replicaAcks?: number | 'auto'; replicaAckTimeoutMs?: number };
  limits: { bodyBytes: number; defaultMaxTokens: number; upstreamAnswerBytes?: number; applicationBytes?: number };
  /** Bounds on every listener (src/http/listener.ts); defaults there. */
  http?: HttpBounds;
  rateLimits?: RateLimitSettings;
  /** Who may read GET /metrics besides the operator: the SHA-256 (hex) of a scrape token. */
  metrics?: { scrapeTokenSha256?: string };
  /** The graph host's worker threads (src/mcp/graph-pool.ts); defaults there. */
  graph?: { workers?: number; queue?: number; callMs?: number };
  /** Graceful shutdown (src/http/shutdown.ts); defaults there. */
  shutdown?: { drainDelayMs?: number; graceMs?: number };
  /** Sign-in sessions (src/sessions). */
  sessions: { cookieName: string; idleMs: number; absoluteMs: number };
  /** Passkeys (src/passkeys); the rpID is the auth origin's host name. */
  passkeys: { rpName: string; challengeMs: number };
  /** Account recovery (src/recovery). */
  recovery: { delayHours: number; challengeMs: number };
  /** TOTP second factor (src/totp). */
  totp: { issuer: string; window: number; maxAttempts: number; lockoutMs: number; pendingMs: number; recoveryCodes: number };
  timeouts: { syncWaitMs: number; upstreamConnectMs: number; upstreamHeadersMs: number; upstreamBodyMs: number };
  jobs: { leaseMs: number; sweepEveryMs: number; retentionMs: number; pollAfterMs: number; maxRunMs: number; upstreamRetries: number };
  demo?: { bootstrap?: boolean };
  /** The receipt log: its key, name and checkpoint cadence, read at start (src/receipts/service.ts). */
  receipts?: { keyFile?: string; logName?: string; checkpointEveryMs?: number; leaseMs?: number; witnesses?: Array<{ key: string; url: string }> };
  /** Decision records, shadow evaluation and impact reports (src/decisions). */
  policy?: { decisionRetentionDays?: number; shadow?: string; requireImpactReport?: boolean };
  /** Wallet sign-ins (src/wallet); defaults in src/wallet/config.ts. */
  wallet?: WalletDoc;
  routes: Record<string, RouteConfig>;
  /** Named operator tokens with scopes (src/app/operators.ts), besides PORTCULLIS_ADMIN_TOKEN. */
  admin?: { operators?: Array<{ name: string; tokenEnv: string; scope: 'read-only' | 'billing' | 'full' }> };
}

export interface WalletDoc {
  nonceTtlSeconds?: number;
  statement?: string;
  chainIds?: number[];
  smartAccount?: { chainId?: number; rpcUrl?: string };
}
