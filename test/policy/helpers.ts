/**
 * A policy author's working copy for tests: a temporary root holding catalog/, rules/, config/ and
 * policies/ (the Rego and its built bundle), and the pinned tools the documented commands use.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { configRoot, REPO } from '../helpers/gateway.js';

/** The pinned opa (scripts/tools.env, built by scripts/setup.sh); throws with the fix when missing. */
export function pinnedOpa(): string {
  const version = /^OPA_VERSION=(\S+)$/m.exec(readFileSync(join(REPO, 'scripts/tools.env'), 'utf8'))?.[1];
  const dir = process.env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools');
  const path = join(dir, `opa-${version}`, 'opa');
  if (!version || !existsSync(path)) throw new Error('the pinned opa is missing; run: npm run setup');
  return path;
}

/** A temporary root with the configuration folders and a copy of policies/ (sources and bundle). */
export function policyRoot(): string {
  const root = configRoot();
  cpSync(join(REPO, 'policies'), join(root, 'policies'), { recursive: true });
  return root;
}

/** `npm run policies:build -- --root <root>`, as docs/policy.md has an author run it. */
export async function buildPolicies(root: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [join(REPO, 'scripts/policies-build.mjs'), '--root', root], { cwd: REPO });
  return stdout;
}

/** `opa test policies` in a root, as the policy gate runs it; resolves with its output, rejects on failure. */
export async function opaTest(root: string): Promise<string> {
  const { stdout } = await promisify(execFile)(pinnedOpa(), ['test', '--ignore', 'build', 'policies'], { cwd: root });
  return stdout;
}

/**
 * A deny rule an author adds (a real change, not a comment: the rebuilt wasm, and so the policy version,
 * differ): tenants whose id holds `:tenant:embargoed-` are refused every model, at `step` with `rank`.
 */
export function embargoRule(step: number, rank: number, message = 'this tenant is under an embargo'): string {
  return `
# METADATA
# title: Tenant embargoed
# description: Tenants named under an embargo are refused every model.
# custom:
#   code: tenant-embargoed
#   step: ${step}
#   rank: ${rank}
deny contains denial(rego.metadata.rule(), "${message}") if {
	contains(input.principal.id, ":tenant:embargoed-")
}
`;
}
