/**
 * The gateway's Prometheus metrics (prom-client), served at `GET /metrics` on the admin listener. One
 * registry per process: every gateway started in it adds to the same series, as one process is one scrape
 * target. Labels are low-cardinality only — hosts, route patterns, status codes, error codes from the
 * table, stage names, upstream routes, catalog model ids, billing kinds, job states, guardrail rule ids —
 * never a principal, token, job id or path with an id in it.
 *
 * The event loop's lag and the heap come from prom-client's default collectors. The histograms every call
 * adds to (request, stage, upstream) count through bound children folded in when read (folded-histogram.ts),
 * and so do its counters (requests, admission, tokens, charge, jobs finished; folded-counter.ts).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { embeddingTotals } from '../guard/model/embedding-cache.js';
import type { Settlement } from '../metering/meter.js';
import { FoldedHistogram } from './folded-histogram.js';
import { FoldedCounter } from './folded-counter.js';

export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'portcullis_' });

const SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 840];

export const metrics = {
  requests: new FoldedCounter({
    name: 'portcullis_http_requests_total',
    help: 'Requests answered, by listener, route pattern, status and error code (empty when none).',
    labelNames: ['host', 'route', 'status', 'code'] as const,
    registers: [registry],
  }),
  requestSeconds: new FoldedHistogram({
    name: 'portcullis_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being finished, by listener and route pattern.',
    labelNames: ['host', 'route'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
  admission: new FoldedCounter({
    name: 'portcullis_admission_total',
    help: 'The admission decision of chat and job calls: "admitted", or the error code that refused them.',
    labelNames: ['decision'] as const,
    registers: [registry],
  }),
  stageSeconds: new FoldedHistogram({
    name: 'portcullis_stage_duration_seconds',
    help: 'Time a pipeline stage spent before handing on (its own work, not the stages after it).',
    labelNames: ['stage'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
  upstreamSeconds: new FoldedHistogram({
    name: 'portcullis_upstream_duration_seconds',
    help: 'Upstream call latency, by route, whatever its outcome.',
    labelNames: ['route'] as const,
    buckets: SECONDS,
    registers: [registry],
  }),
  upstreamErrors: new Counter({
    name: 'portcullis_upstream_errors_total',
    help: 'Upstream calls that failed, by route and error code.',
    labelNames: ['route', 'code'] as const,
    registers: [registry],
  }),
  tokens: new FoldedCounter({
    name: 'portcullis_tokens_total',
    help: 'Tokens settled, by model, billing (free/paid) and kind (prompt/completion/cached).',
    labelNames: ['model', 'billing', 'kind'] as const,
    registers: [registry],
  }),
  chargedMicroUSD: new FoldedCounter({
    name: 'portcullis_charged_micro_usd_total',
    help: 'Micro-USD charged at settlement, by model and billing.',
    labelNames: ['model', 'billing'] as const,
    registers: [registry],
  }),
  jobsRunning: new Gauge({
    name: 'portcullis_jobs_running',
    help: 'Jobs this process is running now.',
    registers: [registry],
  }),
  jobsFinished: new FoldedCounter({
    name: 'portcullis_jobs_finished_total',
    help: 'Jobs this process ran to an end, by state (succeeded, failed, expired).',
    labelNames: ['state'] as const,
    registers: [registry],
  }),
  storeSeconds: new Histogram({
    name: 'portcullis_store_ping_seconds',
    help: 'Round-trip time of a store PING, measured on each /metrics scrape and /readyz check.',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  }),
  replicaShortfalls: new Counter({
    name: 'portcullis_store_replica_ack_shortfalls_total',
    help: 'Money writes (settlements, grants, checkpoints) whose replicas did not confirm them within store.replicaAckTimeoutMs.',
    registers: [registry],
  }),
  storeErrors: new Counter({
    name: 'portcullis_store_errors_total',
    help: 'Requests answered 503 store-unavailable, and store PINGs that failed.',
    registers: [registry],
  }),
  guardrail: new Counter({
    name: 'portcullis_guardrail_actions_total',
    help: 'Guardrail actions taken, by rule id and action (block, redact, flag).',
    labelNames: ['rule', 'action'] as const,
    registers: [registry],
  }),
  intentReadings: new Counter({
    name: 'portcullis_intent_readings_total',
    help: 'Readings of the intent model, by where their embedding came from: its cache (intentModel.cacheEntries) or its encoder.',
    labelNames: ['embedding'] as const,
    registers: [registry],
    // The model adds to plain numbers (no label hashing on its path, no prom-client in the guard); read here.
    collect() {
      this.reset();
      this.inc({ embedding: 'cache' }, embeddingTotals.cached);
      this.inc({ embedding: 'encoder' }, embeddingTotals.encoded);
    },
  }),
  rateLimited: new Counter({
    name: 'portcullis_rate_limited_total',
    help: 'Requests refused 429 rate-limited, by limit.',
    labelNames: ['limit'] as const,
    registers: [registry],
  }),
};

/**
 * The configuration served, and reloads. Per worker (`worker`: its index under PORTCULLIS_WORKERS, 1 in a
 * single process), so that the sum the supervisor serves keeps one series per worker: a worker left on an
 * old version shows as its own `portcullis_config_info` line.
 */
const VERSION_LABELS = ['catalog', 'billing', 'rules', 'guardrails', 'firewall', 'compliance', 'config', 'policy'] as const;
export const configMetrics = {
  info: new Gauge({
    name: 'portcullis_config_info',
    help: 'Always 1: the versions of the configuration and policy this worker serves, as labels.',
    labelNames: ['worker', ...VERSION_LABELS] as const,
    registers: [registry],
  }),
  reloads: new Counter({
    name: 'portcullis_config_reloads_total',
    help: 'Reloads tried (file change, SIGHUP, admin API), by result: applied or refused.',
    labelNames: ['result'] as const,
    registers: [registry],
  }),
  lastReloadSuccess: new Gauge({
    name: 'portcullis_config_last_reload_success',
    help: '1 when the last reload this worker tried was applied, 0 when it was refused (absent before any).',
    labelNames: ['worker'] as const,
    registers: [registry],
  }),
  lastReloadTime: new Gauge({
    name: 'portcullis_config_last_reload_timestamp_seconds',
    help: 'When the last reload this worker tried finished (Unix seconds).',
    labelNames: ['worker'] as const,
    registers: [registry],
  }),
};

/** The versions this worker serves now (replacing the ones it served before). */
export function observeVersions(worker: number, versions: Record<(typeof VERSION_LABELS)[number], string>): void {
  configMetrics.info.reset();
  configMetrics.info.set({ worker: String(worker), ...versions }, 1);
}

/** One reload tried, applied or refused. */
export function observeReload(worker: number, ok: boolean, atMs: number): void {
  configMetrics.reloads.inc({ result: ok ? 'applied' : 'refused' });
  configMetrics.lastReloadSuccess.set({ worker: String(worker) }, ok ? 1 : 0);
  configMetrics.lastReloadTime.set({ worker: String(worker) }, Math.floor(atMs / 1000));
}

/** A route's origins: which answered, which are up, failovers, ejections and fallbacks (src/upstream/targets.ts). */
export const upstreamMetrics = {
  answers: new Counter({
    name: 'portcullis_upstream_answers_total',
    help: 'Upstream answers read, by route and the origin that answered.',
    labelNames: ['route', 'origin'] as const,
    registers: [registry],
  }),
  originUp: new Gauge({
    name: 'portcullis_upstream_origin_up',
    help: '1 when an origin takes calls, 0 while it is ejected or fails its active health check.',
    labelNames: ['route', 'origin'] as const,
    // Under PORTCULLIS_WORKERS each worker judges an origin itself: the supervisor shows the lowest (0 when
    // any worker has ejected it), never a sum that would read 2 for "up".
    aggregator: 'min',
    registers: [registry],
  }),
  failovers: new Counter({
    name: 'portcullis_upstream_failovers_total',
    help: 'Calls moved to the next origin of the route, by route and the origin that failed.',
    labelNames: ['route', 'origin'] as const,
    registers: [registry],
  }),
  ejections: new Counter({
    name: 'portcullis_upstream_ejections_total',
    help: 'Origins ejected after consecutive failures, by route and origin.',
    labelNames: ['route', 'origin'] as const,
    registers: [registry],
  }),
  fallbacks: new Counter({
    name: 'portcullis_upstream_fallbacks_total',
    help: 'Calls answered by a fallback model after every origin of their route failed, by model and fallback.',
    labelNames: ['model', 'fallback'] as const,
    registers: [registry],
  }),
};

/** Times a store PING into the histogram (errors counted); true when the store answered. */
export async function pingStore(ping: () => Promise<void>): Promise<boolean> {
  const end = metrics.storeSeconds.startTimer();
  try {
    await ping();
    end();
    return true;
  } catch {
    metrics.storeErrors.inc();
    return false;
  }
}

/** Tokens and micro-USD of one settlement (a catalog model id is a bounded label). */
export function observeSettlement(model: string, s: Settlement): void {
  if (s.countedTokens === 0 && s.chargedMicroUSD === 0) return;
  const billing = s.billing;
  const key = `${model}\u0000${billing}`;
  metrics.tokens.child(`${key}\u0000prompt`, { model, billing, kind: 'prompt' }).inc(s.usage.prompt_tokens - s.usage.cached_tokens);
  metrics.tokens.child(`${key}\u0000cached`, { model, billing, kind: 'cached' }).inc(s.usage.cached_tokens);
  metrics.tokens.child(`${key}\u0000completion`, { model, billing, kind: 'completion' }).inc(s.usage.completion_tokens);
  metrics.chargedMicroUSD.child(key, { model, billing }).inc(s.chargedMicroUSD);
}
