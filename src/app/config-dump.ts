/**
 * `GET /admin/config`: the configuration a gateway serves, as loaded (every document, environment
 * overrides applied), with the versions — what an operator compares between gateways or against git. Secrets
 * never leave: the YAML holds only the names of the variables that hold them, and any value that could
 * carry one is masked — the user and password of a URL (`redis://:pass@host`), its query string (an API
 * key in `?key=`), and the value of any field named like a credential.
 */
import type { Runtime } from '../config/compile.js';
import { START_ONLY_KEYS, startOnlyChanges } from '../config/start-only.js';

const CREDENTIAL_NAME = /(password|secret|token|apikey|api_key|credential)$/i;
const REDACTED = '[redacted]';

/** A URL with its user, password and query masked; other strings unchanged. */
function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  if (url.username || url.password) {
    url.username = url.username ? REDACTED : '';
    url.password = url.password ? REDACTED : '';
  }
  if (url.search) url.search = `?${REDACTED}`;
  return url.toString();
}

export function redact(value: unknown, key = ''): unknown {
  if (typeof value === 'string') return CREDENTIAL_NAME.test(key) && !/Env$/.test(key) ? REDACTED : redactUrl(value);
  if (Array.isArray(value)) return value.map((v) => redact(v, key));
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v, k)]));
  return value;
}

/**
 * `started`: the gateway settings the process started with. Start-only settings (src/config/start-only.ts)
 * changed on disk and reloaded are not in force until a restart, so the dump shows the started values for
 * them, what is served, and lists the values on disk apart, under `pendingRestart`.
 */
export function configDump(runtime: Runtime, started: Runtime['gateway'] = runtime.gateway): Record<string, unknown> {
  const b = runtime.bundle;
  const docs = [b.models, b.billing, b.rungs, b.guardrails, b.firewall, b.compliance];
  const onDisk = runtime.gateway as unknown as Record<string, unknown>;
  const served: Record<string, unknown> = { ...onDisk };
  const pending: Record<string, unknown> = {};
  const settings = startOnlyChanges(started, runtime.gateway);
  for (const key of START_ONLY_KEYS) {
    const value = (started as unknown as Record<string, unknown>)[key];
    if (value === undefined) delete served[key];
    else served[key] = value;
    if (settings.some((s) => s === key || s.startsWith(`${key}.`))) pending[key] = onDisk[key] ?? null;
  }
  return {
    versions: runtime.versions,
    documents: { ...Object.fromEntries(docs.map((d) => [d.file, redact(d.data)])), [b.gateway.file]: redact(served) },
    // Start-only settings changed on disk since the start: not in force until a restart.
    pendingRestart: { settings, onDisk: redact(pending) },
  };
}
