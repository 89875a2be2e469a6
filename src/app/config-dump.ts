/**
 * `GET /admin/config`: the configuration a gateway serves, as loaded (every document, environment
 * overrides applied), with the versions — what an operator compares between gateways or against git. Secrets
 * never leave: the YAML holds only the names of the variables that hold them, and any value that could
 * carry one is masked — the user and password of a URL (`redis://:pass@host`), its query string (an API
 * key in `?key=`), and the value of any field named like a credential.
 */
import type { Runtime } from '../config/compile.js';

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

export function configDump(runtime: Runtime): Record<string, unknown> {
  const b = runtime.bundle;
  const docs = [b.models, b.billing, b.rungs, b.guardrails, b.firewall, b.compliance, b.gateway];
  return {
    versions: runtime.versions,
    documents: Object.fromEntries(docs.map((d) => [d.file, redact(d.data)])),
  };
}
