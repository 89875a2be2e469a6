/**
 * The secrets a configuration refers to, by name: every `apiKeyEnv` and `tokenEnv` in config/gateway.yaml
 * (route origins, operator tokens) and rules/guardrails.yaml (external classifiers), wherever it sits, with the JSON path that names it.
 * `portcullis check` validates a configuration offline, on a machine that holds none of the production
 * secrets: it needs each secret to be referenced (a name in the right place), not set, so it lists them and
 * compiles with a stand-in value for the ones this machine does not have.
 */
import type { ConfigBundle } from './load.js';

export interface SecretReference {
  /** The environment variable's name. */
  name: string;
  /** `<file>: <JSON path>` of the key that names it. */
  where: string;
}

/** A value that stands in for an unset secret during an offline check; never sent anywhere. */
export const OFFLINE_STAND_IN = 'portcullis-check-offline-stand-in';

export function referencedSecrets(bundle: ConfigBundle): SecretReference[] {
  const found: SecretReference[] = [];
  const walk = (value: unknown, file: string, path: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, file, `${path}/${i}`));
    else if (typeof value === 'object' && value !== null) {
      for (const [key, v] of Object.entries(value)) {
        if ((key === 'apiKeyEnv' || key === 'tokenEnv') && typeof v === 'string') found.push({ name: v, where: `${file}: ${path}/${key}` });
        else walk(v, file, `${path}/${key}`);
      }
    }
  };
  walk(bundle.gateway.data, bundle.gateway.file, '');
  walk(bundle.guardrails.data, bundle.guardrails.file, '');
  return found;
}

/** `env` with a stand-in for each referenced secret it does not hold, for compiling offline. */
export function withStandIns(env: Record<string, string | undefined>, refs: SecretReference[]): Record<string, string | undefined> {
  const out = { ...env };
  for (const r of refs) if (!out[r.name]) out[r.name] = OFFLINE_STAND_IN;
  return out;
}
