/**
 * The compiled policy bundle on disk: policies/build/admission.wasm and the manifest that says what it
 * was built from (written by scripts/policies-build.mjs, committed with the wasm so `npm start` never
 * needs opa).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './source-hash.js';

export const POLICY_BUILD_DIR = join(REPO_ROOT, 'policies', 'build');
export const DEFAULT_WASM_PATH = join(POLICY_BUILD_DIR, 'admission.wasm');
export const DEFAULT_MANIFEST_PATH = join(POLICY_BUILD_DIR, 'manifest.json');

/** The one entrypoint the gateway evaluates: package `admission`, rule `decision`. */
export const ENTRYPOINT = 'admission/decision';

export interface PolicyManifest {
  /** The opa version that compiled the wasm, e.g. "1.22.2". */
  opaVersion: string;
  entrypoint: string;
  /** policySourceHash() of the sources at build time. */
  sourceHash: string;
  /** The repo-relative .rego files compiled in. */
  sources: string[];
}

export function readPolicyManifest(path: string = DEFAULT_MANIFEST_PATH): PolicyManifest {
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'));
  const m = raw as Partial<PolicyManifest> | null;
  if (typeof m?.opaVersion !== 'string' || typeof m.entrypoint !== 'string' || typeof m.sourceHash !== 'string' || !Array.isArray(m.sources)) {
    throw new Error(`${path} is not a policy manifest; run \`npm run policies:build\``);
  }
  return { opaVersion: m.opaVersion, entrypoint: m.entrypoint, sourceHash: m.sourceHash, sources: m.sources };
}
