/**
 * Compiling: a validated ConfigBundle becomes the immutable Runtime a request is served from — the policy
 * instance with its data set, the compiled guardrail detectors, one undici pool per upstream origin, the
 * price table. A request takes one Runtime at its start and keeps it to its end, so a reload never mixes two
 * configurations inside one call. Compile either succeeds whole or throws; the caller swaps only on success.
 */
import { Pool } from 'undici';
import type { Origin } from '../upstream/origin.js';
import { ConfigError } from './documents.js';
import type { ConfigBundle } from './load.js';
import type { BillingDoc, CatalogModel, ModelLimits, RouteConfig, Rung, RungsDoc, Team, TeamBar, WeightedOrigin } from './types.js';
import { DEFAULT_EJECTION, RouteUpstream } from '../upstream/targets.js';
import { policyBundleFiles, policyBundleProblem } from '../policy/bundle.js';
import { denyRuleProblems } from '../policy/deny-rules.js';
import { loadPolicyEngine, type PolicyData, type PolicyEngine } from '../policy/engine.js';
import { IntentModel } from '../guard/model/intent-model.js';
import { buildClassifiers, compileGuardrails, type ExternalClassifiers, type Guardrails, type GuardrailsDoc } from '../guard/index.js';

/** The default of `limits.upstreamAnswerBytes`: far above any answer of 32k output tokens. */
export const UPSTREAM_ANSWER_BYTES = 8 * 1024 * 1024;

/** The cold-start budget when a route does not set one: 3 minutes, or half the synchronous wait if shorter. */
export const COLD_START_MS = 180_000;

export interface ModelRuntime {
  id: string;
  team: Team;
  route: string;
  tasks: ReadonlySet<string>;
  echo: CatalogModel['echo'];
  limits: ModelLimits;
  /** `served` when the route has an origin for this model. */
  available: boolean;
  /** The id sent upstream and expected back under the strict echo rule. */
  upstreamModel: string;
  /** The route's first origin (what the single-origin form has); null when the route is not configured. */
  origin: Origin | null;
  /** Every origin of the route, balanced and failed over (src/upstream/targets.ts); null when not configured. */
  upstream: RouteUpstream | null;
  /** A catalog model on another route that answers when every origin of this one fails, or null. */
  fallbackModel: string | null;
}

export interface Versions {
  catalog: string;
  billing: string;
  rules: string;
  guardrails: string;
  firewall: string;
  compliance: string;
  config: string;
  policy: string;
}

const decided = new WeakMap<Versions, Readonly<Omit<Versions, 'billing'>>>();

/**
 * The versions a call is decided under: what a receipt records and GET /v1/secure serves, by the same names.
 * Made once per runtime's versions (every call's receipt and decision record carry them), frozen since they
 * are shared, and in key order, so the records' canonical texts have nothing to reorder (src/canonical-json.ts).
 */
export function decisionVersions(v: Versions): Readonly<Omit<Versions, 'billing'>> {
  let made = decided.get(v);
  if (!made) {
    const { billing: _billing, ...rest } = v;
    made = Object.freeze(Object.fromEntries(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)))) as Omit<Versions, 'billing'>;
    decided.set(v, made);
  }
  return made;
}

export interface Runtime {
  readonly bundle: ConfigBundle;
  readonly versions: Versions;
  readonly models: ReadonlyMap<string, ModelRuntime>;
  /** Catalog order, for GET /v1/models. */
  readonly modelList: readonly ModelRuntime[];
  readonly tasks: RungsDoc['tasks'];
  readonly defaultTask: string;
  readonly rungs: ReadonlyMap<string, Rung>;
  readonly teams: Readonly<Record<Team, TeamBar>>;
  readonly aupVersion: string;
  /** Screening validity, the trust projection and which rungs are screened (rules/rungs.yaml). */
  readonly verification: RungsDoc['verification'];
  readonly rates: BillingDoc['rates'];
  readonly policy: PolicyEngine;
  readonly guard: Guardrails;
  readonly gateway: ConfigBundle['gateway']['data'];
  readonly jobs: ConfigBundle['gateway']['data']['jobs'];
  /** Closes the upstream pools once their in-flight requests finish. */
  close(): Promise<void>;
}

export interface CompileOptions {
  /** Base URL of the bundled demo upstream, for routes whose origin says `demo: true`. */
  demoBaseUrl?: string;
  env?: Record<string, string | undefined>;
  /** Run the routes' active health checks (default true; `portcullis check` compiles without probing). */
  probe?: boolean;
}

/** The policy's view of the configuration: small, flat, and everything Rego needs to decide. */
export function policyData(bundle: ConfigBundle, available: (m: CatalogModel) => boolean): PolicyData {
  const rules = bundle.rungs.data;
  const guardrails = (bundle.guardrails.data as unknown as GuardrailsDoc).rules;
  return {
    catalog: {
      models: Object.fromEntries(bundle.models.data.models.map((m) => [m.id, { team: m.team, route: m.route, tasks: m.tasks, available: available(m) }])),
    },
    rules: {
      bands: rules.bands,
      taskBands: Object.fromEntries(Object.entries(rules.tasks).map(([task, t]) => [task, t.band])),
      rungs: Object.fromEntries(rules.rungs.map((r, i) => [r.id, { level: r.level, rank: i + 1, band: r.band }])),
      teams: rules.teams,
      guardrails: Object.fromEntries(guardrails.map((g) => [g.id, { action: g.action }])),
    },
  };
}

type OneOrigin = NonNullable<RouteConfig['origin']> | WeightedOrigin;

/** One origin of a route: its pool (with the route's timeouts), path and key; null with a problem when it cannot be built. */
function compileOrigin(bundle: ConfigBundle, route: string, origin: OneOrigin, at: string, options: CompileOptions, problems: string[]): Origin | null {
  const cfg = bundle.gateway.data;
  const file = bundle.gateway.file;
  let baseUrl: string;
  let authorization: string | null = null;
  let connections = 64;
  if ('demo' in origin) {
    if (!options.demoBaseUrl) {
      problems.push(`${file}: ${at} uses the demo upstream, which is not running`);
      return null;
    }
    baseUrl = options.demoBaseUrl;
  } else {
    baseUrl = origin.baseUrl;
    connections = origin.connections ?? connections;
    if (origin.apiKeyEnv) {
      const key = (options.env ?? process.env)[origin.apiKeyEnv];
      if (!key) {
        problems.push(`${file}: ${at}/apiKeyEnv names ${origin.apiKeyEnv}, which is not set in the environment`);
        return null;
      }
      authorization = `Bearer ${key}`;
    }
  }
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    problems.push(`${file}: ${at}/baseUrl is not a URL`);
    return null;
  }
  // The route's own timeouts, each defaulting to the gateway's.
  const t = cfg.timeouts;
  const configured = cfg.routes[route]?.coldStartMs;
  if (configured !== undefined && configured >= t.syncWaitMs) {
    problems.push(`${file}: /routes/${route}/coldStartMs (${configured}) must be below timeouts.syncWaitMs (${t.syncWaitMs})`);
    return null;
  }
  const coldStartMs = configured ?? Math.min(COLD_START_MS, Math.floor(t.syncWaitMs / 2));
  const own = cfg.routes[route]?.timeouts ?? {};
  const maxAnswerBytes = cfg.limits.upstreamAnswerBytes ?? UPSTREAM_ANSWER_BYTES;
  const pool = new Pool(url.origin, {
    connections,
    pipelining: 1,
    connect: { timeout: own.connectMs ?? t.upstreamConnectMs },
    headersTimeout: own.headersMs ?? t.upstreamHeadersMs,
    bodyTimeout: own.bodyMs ?? t.upstreamBodyMs,
    keepAliveTimeout: 30_000,
    // An answer is read into memory: bound it, so a huge answer is cut off as it arrives.
    maxResponseSize: maxAnswerBytes,
  });
  return {
    route,
    baseUrl,
    chatPath: `${url.pathname.replace(/\/+$/, '')}/chat/completions`,
    demo: 'demo' in origin,
    pool,
    authorization,
    maxAnswerBytes,
    coldStartMs,
  };
}

/**
 * A route's upstream: its one `origin`, or its several `origins` with weights, passive ejection and
 * (when `healthCheck` is set) active checks. Null when the route has no origin or one could not be built.
 */
function compileRoute(bundle: ConfigBundle, route: string, options: CompileOptions, problems: string[]): RouteUpstream | null {
  const r = bundle.gateway.data.routes[route];
  if (!r) return null;
  const list: Array<{ origin: OneOrigin; name: string; weight: number; at: string }> = r.origins
    ? r.origins.map((o, i) => ({ origin: o, name: o.name ?? `origin-${i + 1}`, weight: o.weight ?? 1, at: `/routes/${route}/origins/${i}` }))
    : r.origin
      ? [{ origin: r.origin, name: 'origin-1', weight: 1, at: `/routes/${route}/origin` }]
      : [];
  if (list.length === 0) return null;
  const built = list.map((o) => ({ ...o, compiled: compileOrigin(bundle, route, o.origin, o.at, options, problems) }));
  if (built.some((o) => o.compiled === null)) {
    for (const o of built) void o.compiled?.pool.close();
    return null;
  }
  const names = new Set(list.map((o) => o.name));
  if (names.size !== list.length) problems.push(`${bundle.gateway.file}: /routes/${route}/origins names an origin twice`);
  // A lone origin that refuses connections is waited for within the cold-start budget; one of several, or one
  // whose models have a fallback, is failed over at once instead (after its `jobs.upstreamRetries`), since
  // something else can answer now.
  const failsOver = built.length > 1 || Object.values(r.models).some((m) => m.fallbackModel !== undefined);
  const upstream = new RouteUpstream(
    route,
    built.map((o) => ({ origin: failsOver ? { ...o.compiled!, coldStartMs: 0 } : o.compiled!, name: o.name, weight: o.weight })),
    { consecutiveFailures: r.ejection?.consecutiveFailures ?? DEFAULT_EJECTION.consecutiveFailures, ejectMs: r.ejection?.ejectMs ?? DEFAULT_EJECTION.ejectMs },
  );
  if (r.healthCheck && options.probe !== false) {
    upstream.startHealthChecks({ path: r.healthCheck.path ?? '/models', intervalMs: r.healthCheck.intervalMs, timeoutMs: r.healthCheck.timeoutMs ?? 2_000 });
  }
  return upstream;
}

/** Compiles a whole runtime or throws (ConfigError for configuration problems). */
export async function compileRuntime(bundle: ConfigBundle, options: CompileOptions = {}): Promise<Runtime> {
  const problems: string[] = [];
  const cfg = bundle.gateway.data;
  const upstreams = new Map<string, RouteUpstream | null>();
  for (const route of Object.keys(cfg.routes)) upstreams.set(route, compileRoute(bundle, route, options, problems));

  const models = new Map<string, ModelRuntime>();
  for (const m of bundle.models.data.models) {
    const routed = cfg.routes[m.route]?.models[m.id];
    const upstream = routed ? (upstreams.get(m.route) ?? null) : null;
    const origin = upstream?.primary ?? null;
    models.set(m.id, {
      id: m.id,
      team: m.team,
      route: m.route,
      tasks: new Set(m.tasks),
      echo: m.echo,
      limits: m.limits,
      available: origin !== null,
      upstreamModel: routed?.upstreamModel ?? m.id,
      origin,
      upstream,
      fallbackModel: routed?.fallbackModel ?? null,
    });
  }

  let guard: Guardrails;
  // External classifiers (rules/guardrails.yaml `classifiers:`) hold connection pools: closed with the runtime.
  let external: ExternalClassifiers | undefined;
  let intentModel: IntentModel | undefined;
  try {
    const doc = bundle.guardrails.data as unknown as GuardrailsDoc;
    external = buildClassifiers(doc, options.env ?? process.env);
    // The intent model's worker pool is closed with the runtime too (its workers start on first use).
    // PORTCULLIS_INTENT_MODEL=off is the operator's explicit choice to let the word scorer decide alone (a
    // host without the encoder installed); otherwise a missing or changed encoder refuses the configuration.
    intentModel = doc.intentModel && options.env?.['PORTCULLIS_INTENT_MODEL'] !== 'off' ? new IntentModel(doc.intentModel) : undefined;
    guard = compileGuardrails(doc, { classifiers: external.classifiers, ...(intentModel ? { intentModel } : {}) });
  } catch (err) {
    problems.push(`${bundle.guardrails.file}: ${(err as Error).message}`);
  }
  const closePools = () => Promise.all([...[...upstreams.values()].map((u) => u?.close()), external?.close(), intentModel?.close()]).then(() => undefined);
  if (problems.length > 0) {
    await closePools();
    throw new ConfigError(problems);
  }

  // The bundle of the root being served, refused when its Rego changed since it was built (src/policy/bundle.ts).
  const policyFiles = policyBundleFiles(bundle.root);
  const stale = policyBundleProblem(policyFiles);
  // A deny rule with incomplete or invalid METADATA is refused by name, never served (src/policy/deny-rules.ts).
  const policyProblems = [...(stale ? [stale] : []), ...denyRuleProblems(policyFiles.root)];
  if (policyProblems.length > 0) {
    await closePools();
    throw new ConfigError(policyProblems);
  }
  const policy = await loadPolicyEngine(policyFiles.wasmPath);
  policy.setData(policyData(bundle, (m) => models.get(m.id)?.available ?? false));

  const rungs = bundle.rungs.data;
  return Object.freeze({
    bundle,
    versions: {
      catalog: bundle.models.version,
      billing: bundle.billing.version,
      rules: rungs.version,
      guardrails: bundle.guardrails.version,
      firewall: bundle.firewall.version,
      compliance: bundle.compliance.version,
      config: bundle.gateway.version,
      policy: policy.version,
    },
    models,
    modelList: [...models.values()],
    tasks: rungs.tasks,
    defaultTask: rungs.defaultTask,
    rungs: new Map(rungs.rungs.map((r) => [r.id, r])),
    teams: rungs.teams,
    aupVersion: rungs.aup.version,
    verification: rungs.verification,
    // In key order (a copy): every receipt carries them, and its canonical text has nothing to reorder then.
    rates: Object.fromEntries(Object.entries(bundle.billing.data.rates).sort(([a], [b]) => (a < b ? -1 : 1))) as BillingDoc['rates'],
    policy,
    guard: guard!,
    gateway: cfg,
    jobs: cfg.jobs,
    close: closePools,
  });
}
