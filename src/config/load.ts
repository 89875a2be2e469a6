/**
 * Loading: the YAML documents under one root (catalog/, rules/, config/) become one validated, plain-data
 * bundle. Each document is checked against its own schema first, then the bundle is checked across files
 * (a model's tasks must exist in the rules, a configured model must be in the catalog on that route, ...),
 * so that compiling never meets a dangling reference.
 *
 * Environment overrides are applied here, before validation, so an override is held to the same schema
 * as the file it overrides.
 */
import { ConfigError, loadDocument, type LoadedDocument } from './documents.js';
import { HOST_NAMES, type BillingDoc, type GatewayDoc, type ModelsDoc, type RungsDoc } from './types.js';
import { parseWitnessKey, sameWitnessKey, type WitnessKey } from '../receipts/witness/cosignature.js';
import { gatewaySchemaJson } from './gateway-schema.js';

export const DOCUMENT_FILES = {
  models: 'catalog/models.yaml',
  billing: 'catalog/billing.yaml',
  rungs: 'rules/rungs.yaml',
  guardrails: 'rules/guardrails.yaml',
  firewall: 'rules/firewall.yaml',
  compliance: 'rules/compliance.yaml',
  gateway: 'config/gateway.yaml',
} as const;

export interface ConfigBundle {
  root: string;
  models: LoadedDocument<ModelsDoc>;
  billing: LoadedDocument<BillingDoc>;
  rungs: LoadedDocument<RungsDoc>;
  guardrails: LoadedDocument<Record<string, unknown>>;
  firewall: LoadedDocument<Record<string, unknown>>;
  compliance: LoadedDocument<Record<string, unknown>>;
  gateway: LoadedDocument<GatewayDoc>;
}

type Env = Record<string, string | undefined>;

/** Environment overrides of config/gateway.yaml; each is validated with the file. */
export function applyEnvOverrides(doc: Record<string, unknown>, env: Env): void {
  const listeners = doc['listeners'] as Record<string, Record<string, unknown>> | undefined;
  const port = (name: string) => (/^\d+$/.test(env[name] ?? '') ? Number(env[name]) : env[name]);
  // PORTCULLIS_PORT_BASE moves every listener at once, keeping the file's spacing: the API on the base, each
  // other listener as far from it as in the file (8081 -> base+1, ..., admin 8090 -> base+10). A second
  // instance on one machine is then one variable. The more specific variables below still win.
  const base = env['PORTCULLIS_PORT_BASE'];
  if (base && listeners?.['api']) {
    const apiPort = Number(listeners['api']['port']);
    for (const host of HOST_NAMES) {
      const listener = listeners[host];
      if (!listener) continue;
      // Not a whole number: left as text, so the schema check names the listener's port as invalid.
      listener['port'] = /^\d+$/.test(base) ? Number(base) + Number(listener['port']) - apiPort : base;
    }
  }
  // PORT is the API's port (the convention of process managers); PORTCULLIS_API_PORT, more specific, wins.
  if (env['PORT'] !== undefined && listeners?.['api']) listeners['api']['port'] = port('PORT');
  for (const host of HOST_NAMES) {
    const name = host.toUpperCase();
    const listener = listeners?.[host];
    if (!listener) continue;
    // The bind address: a container's loopback is its own, so an image binds the public hosts to 0.0.0.0.
    if (env[`PORTCULLIS_${name}_HOST`]) listener['host'] = env[`PORTCULLIS_${name}_HOST`];
    if (env[`PORTCULLIS_${name}_PORT`] !== undefined) listener['port'] = port(`PORTCULLIS_${name}_PORT`);
    if (env[`PORTCULLIS_${name}_URL`]) listener['url'] = env[`PORTCULLIS_${name}_URL`]!.replace(/\/+$/, '');
  }
  // REDIS_CLUSTER_NODES selects a cluster (REDIS_URL then lends it only credentials and TLS); REDIS_URL alone,
  // one primary. An empty or malformed node list fails the schema check, as a bad file would.
  if (env['REDIS_URL'] || env['REDIS_CLUSTER_NODES'] !== undefined) {
    // The file's own Redis settings (prefix, replica acknowledgement) stay; only where Redis is changes.
    const { kind: _kind, url: _url, nodes: _nodes, ...kept } = (doc['store'] ?? {}) as Record<string, unknown>;
    const nodes = env['REDIS_CLUSTER_NODES']?.split(',').map((n) => n.trim());
    doc['store'] = { kind: 'redis', ...(env['REDIS_URL'] ? { url: env['REDIS_URL'] } : {}), ...(nodes ? { nodes } : {}), ...kept };
  }
  if (env['PORTCULLIS_SMART_ACCOUNT_RPC_URL']) {
    const wallet = (doc['wallet'] ??= {}) as Record<string, Record<string, unknown>>;
    (wallet['smartAccount'] ??= {})['rpcUrl'] = env['PORTCULLIS_SMART_ACCOUNT_RPC_URL'];
  }
  const routes = doc['routes'] as Record<string, { origin?: Record<string, unknown>; origins?: Array<Record<string, unknown>> }> | undefined;
  for (const [name, route] of Object.entries(routes ?? {})) {
    const url = env[`PORTCULLIS_ROUTE_${name.toUpperCase().replace(/-/g, '_')}_URL`];
    if (!url) continue;
    // The override is one origin: it replaces the single origin or the whole list (keeping the first's key).
    const previous = route.origin ?? route.origins?.[0] ?? {};
    delete route.origins;
    route.origin = { baseUrl: url, ...('apiKeyEnv' in previous ? { apiKeyEnv: previous['apiKeyEnv'] } : {}) };
  }
}

/** Checks that hold across documents; each problem names the file and path that hold the dangling name. */
function crossCheck(b: Omit<ConfigBundle, 'root'>): string[] {
  const problems: string[] = [];
  const rungs = b.rungs.data;
  const bands = new Set(rungs.bands);
  const tasks = rungs.tasks;
  const at = (file: string, path: string, msg: string) => problems.push(`${file}: ${path} ${msg}`);

  for (const [task, t] of Object.entries(tasks)) {
    if (!bands.has(t.band)) at(b.rungs.file, `/tasks/${task}/band`, `names unknown band "${t.band}"`);
  }
  if (!tasks[rungs.defaultTask]) at(b.rungs.file, '/defaultTask', `names unknown task "${rungs.defaultTask}"`);
  const seenRungs = new Set<string>();
  rungs.rungs.forEach((r, i) => {
    if (seenRungs.has(r.id)) at(b.rungs.file, `/rungs/${i}/id`, `repeats rung "${r.id}"`);
    seenRungs.add(r.id);
    if (!bands.has(r.band)) at(b.rungs.file, `/rungs/${i}/band`, `names unknown band "${r.band}"`);
    if (r.ceilingPerDay < r.tokensPerDay) at(b.rungs.file, `/rungs/${i}/ceilingPerDay`, 'is below tokensPerDay');
    r.approves.forEach((a, j) =>
      a.tasks.forEach((task, k) => {
        if (!tasks[task]) at(b.rungs.file, `/rungs/${i}/approves/${j}/tasks/${k}`, `names unknown task "${task}"`);
      }),
    );
  });
  rungs.verification.screenedRungs.forEach((id, i) => {
    if (!seenRungs.has(id)) at(b.rungs.file, `/verification/screenedRungs/${i}`, `names unknown rung "${id}"`);
  });
  for (const [team, bar] of Object.entries(rungs.teams)) {
    if (!bands.has(bar.maxBand)) at(b.rungs.file, `/teams/${team}/maxBand`, `names unknown band "${bar.maxBand}"`);
  }

  const catalog = new Map<string, { route: string; team: string }>();
  b.models.data.models.forEach((m, i) => {
    if (catalog.has(m.id)) at(b.models.file, `/models/${i}/id`, `repeats model "${m.id}"`);
    catalog.set(m.id, m);
    m.tasks.forEach((task, k) => {
      if (!tasks[task]) at(b.models.file, `/models/${i}/tasks/${k}`, `names unknown task "${task}"`);
    });
  });

  for (const [route, r] of Object.entries(b.gateway.data.routes)) {
    for (const [id, m] of Object.entries(r.models)) {
      const model = catalog.get(id);
      if (!model) at(b.gateway.file, `/routes/${route}/models/${id}`, 'is not in the catalog');
      else if (model.route !== route) at(b.gateway.file, `/routes/${route}/models/${id}`, `is on route "${model.route}" in the catalog`);
      // A fallback answers when this route's origins fail: it must be a catalog model on another route.
      if (m.fallbackModel !== undefined) {
        const fallback = catalog.get(m.fallbackModel);
        if (!fallback) at(b.gateway.file, `/routes/${route}/models/${id}/fallbackModel`, `names "${m.fallbackModel}", which is not in the catalog`);
        else if (fallback.route === route)
          at(b.gateway.file, `/routes/${route}/models/${id}/fallbackModel`, `names "${m.fallbackModel}", which is on the same route`);
        // Never a way around admission: the fallback serves the same team (the policy admitted the call for it).
        else if (model && fallback.team !== model.team)
          at(b.gateway.file, `/routes/${route}/models/${id}/fallbackModel`, `names "${m.fallbackModel}", a model of another team`);
      }
    }
  }
  // A witness's key must be a cosignature/v1 Ed25519 verifier key whose id matches (the schema checks its shape only).
  // Nor the same key as another's under another name: a cosignature does not sign the name, so it would be one witness counted twice.
  const witnessKeys: WitnessKey[] = [];
  (b.gateway.data.receipts?.witnesses ?? []).forEach((w, i) => {
    try {
      const key = parseWitnessKey(w.key);
      const { name } = key;
      const twin = witnessKeys.find((o) => sameWitnessKey(o, key));
      if (witnessKeys.some((o) => o.name === name)) at(b.gateway.file, `/receipts/witnesses/${i}/key`, `repeats witness "${name}"`);
      else if (twin)
        at(
          b.gateway.file,
          `/receipts/witnesses/${i}/key`,
          `is the key of witness "${twin.name}" under another name ("${name}"): one witness cannot be listed twice`,
        );
      witnessKeys.push(key);
    } catch (err) {
      at(b.gateway.file, `/receipts/witnesses/${i}/key`, (err as Error).message);
    }
  });
  return problems;
}

/** Loads and validates every document under `root`. Throws ConfigError with every problem found. */
export function loadConfig(root: string, env: Env = process.env): ConfigBundle {
  const problems: string[] = [];
  const attempt = <T>(file: string, patch?: (d: Record<string, unknown>) => void, schema?: () => Record<string, unknown>): LoadedDocument<T> | undefined => {
    try {
      return loadDocument<T>(root, file, patch, schema);
    } catch (err) {
      if (err instanceof ConfigError) problems.push(...err.problems);
      else throw err;
      return undefined;
    }
  };
  const docs = {
    models: attempt<ModelsDoc>(DOCUMENT_FILES.models),
    billing: attempt<BillingDoc>(DOCUMENT_FILES.billing),
    rungs: attempt<RungsDoc>(DOCUMENT_FILES.rungs),
    guardrails: attempt<Record<string, unknown>>(DOCUMENT_FILES.guardrails),
    firewall: attempt<Record<string, unknown>>(DOCUMENT_FILES.firewall),
    compliance: attempt<Record<string, unknown>>(DOCUMENT_FILES.compliance),
    // Held to the schema the code declares (gateway-schema.ts), not to a copy beside the file.
    gateway: attempt<GatewayDoc>(DOCUMENT_FILES.gateway, (d) => applyEnvOverrides(d, env), gatewaySchemaJson),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  const bundle = docs as Omit<ConfigBundle, 'root'>;
  const cross = crossCheck(bundle);
  if (cross.length > 0) throw new ConfigError(cross);
  return { root, ...bundle };
}
