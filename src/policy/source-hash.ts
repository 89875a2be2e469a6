/**
 * The policy sources and their hash: what `npm run policies:build` compiles and records in
 * policies/build/manifest.json. test/policy/bundle.test.ts compares the two so a Rego edit without a
 * rebuild fails the tests instead of silently serving the old wasm.
 *
 * scripts/policies-build.mjs loads this module (through tsx) rather than carrying its own copy, so the
 * build and the check hash the same files the same way.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root: src/policy (or dist/policy once built) is two levels below it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Repo-relative POSIX paths of the non-test .rego files under policies/ (not testdata/, not build/), sorted. */
export function policySources(repoRoot: string = REPO_ROOT): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'build' && entry.name !== 'testdata') walk(path);
      } else if (entry.name.endsWith('.rego') && !entry.name.endsWith('_test.rego')) {
        found.push(relative(repoRoot, path).split(sep).join('/'));
      }
    }
  };
  walk(join(repoRoot, 'policies'));
  return found.sort();
}

/** sha256 (hex) over each source's path and content, in path order, NUL-separated so no two inputs collide. */
export function policySourceHash(repoRoot: string = REPO_ROOT): string {
  const hash = createHash('sha256');
  for (const path of policySources(repoRoot)) {
    hash
      .update(path)
      .update('\0')
      .update(readFileSync(join(repoRoot, path)))
      .update('\0');
  }
  return hash.digest('hex');
}
