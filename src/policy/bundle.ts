/**
 * Which compiled policy a root serves, and whether it is still what its Rego says. A root that holds a
 * policies/ folder (PORTCULLIS_ROOT, or the install folder) serves the bundle built there:
 * policies/build/admission.wasm and the manifest that records the hash of the Rego it was built from. A
 * root without policies/ (one holding only catalog/, rules/ and config/) serves the install folder's.
 *
 * A bundle whose recorded source hash is not the hash of the Rego beside it is stale: someone edited the
 * policy and did not rebuild. Start-up, every reload and `portcullis check` refuse it by name (with the
 * command that rebuilds it) instead of serving the old policy under the old hash without a word.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readPolicyManifest } from './manifest.js';
import { policySourceHash, REPO_ROOT } from './source-hash.js';

export interface PolicyBundleFiles {
  /** The root whose policies/ is served. */
  root: string;
  wasmPath: string;
  manifestPath: string;
}

/** The bundle a root serves: its own when it has a policies/ folder, else the install folder's. */
export function policyBundleFiles(root: string): PolicyBundleFiles {
  const own = existsSync(join(root, 'policies'));
  const from = own ? root : REPO_ROOT;
  const dir = join(from, 'policies', 'build');
  return { root: from, wasmPath: join(dir, 'admission.wasm'), manifestPath: join(dir, 'manifest.json') };
}

/**
 * Null when the bundle was built from the Rego beside it; otherwise the problem, in the words a config
 * error uses (file, what is wrong, what to run).
 */
export function policyBundleProblem(files: PolicyBundleFiles): string | null {
  if (!existsSync(files.wasmPath) || !existsSync(files.manifestPath)) {
    return `${files.wasmPath}: the policy is not built; run \`npm run policies:build -- --root ${files.root}\``;
  }
  let recorded: string;
  try {
    recorded = readPolicyManifest(files.manifestPath).sourceHash;
  } catch (err) {
    return (err as Error).message;
  }
  const current = policySourceHash(files.root);
  if (recorded === current) return null;
  return (
    `${files.manifestPath}: the policy bundle is stale: policies/ hashes to ${current.slice(0, 12)} but the wasm was ` +
    `built from ${recorded.slice(0, 12)}; run \`npm run policies:build -- --root ${files.root}\` (the running policy is kept)`
  );
}
