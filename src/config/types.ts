/**
 * The shapes of the configuration documents, as their JSON Schemas allow them. These are plain data;
 * `compile.ts` turns them into the runtime the gateway serves from. The catalog's and the rules' are written
 * here beside the schemas of catalog/ and rules/; the gateway's is derived from its schema (below).
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

/*
 * config/gateway.yaml: its type is derived from its schema, which is assembled from the sections beside the
 * code that reads them (gateway-schema.ts). Re-exported here, where the rest of the gateway has always found them.
 */
export type { GatewayDoc } from './gateway-schema.js';
export { HOST_NAMES, type HostName, type HttpBounds } from '../http/config.js';
export type { RouteConfig, WeightedOrigin } from '../upstream/config.js';
export type { RateLimitSettings } from '../ratelimit/config.js';
