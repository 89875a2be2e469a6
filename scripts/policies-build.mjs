// Compiles the admission policy to wasm for the gateway: `npm run policies:build`.
//
// Runs the pinned `opa build -t wasm -e admission/decision` over the policy sources (every .rego under
// policies/ except *_test.rego, testdata/ and build/), takes policy.wasm out of the bundle and writes
//   policies/build/admission.wasm   the module src/policy/engine.ts loads
//   policies/build/manifest.json    { opaVersion, entrypoint, sourceHash, sources }
// Both are committed, so `npm start` never needs opa; test/policy/bundle.test.ts fails when the
// sources no longer match the manifest's hash (a stale bundle).
//
// `--root DIR` (or PORTCULLIS_ROOT) builds the policies/ of another root, the one a gateway serves from;
// without either it builds this repository's.
//
// `--print-hash` prints the current sources' hash and exits.
//
// Which files are sources and how they are hashed is src/policy/source-hash.ts, the module the gateway
// checks the manifest with: this plain-node script loads it through tsx (a dev dependency, as is opa), so
// it runs on a fresh clone before anything is compiled, and the two can never disagree.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { tsImport } from 'tsx/esm/api';
import { opaPath, requireTool } from './tools.mjs';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const rootFlag = process.argv.indexOf('--root');
const root = rootFlag > 0 && process.argv[rootFlag + 1] ? resolve(process.argv[rootFlag + 1]) : resolve(process.env.PORTCULLIS_ROOT || repoRoot);
const entrypoint = 'admission/decision';
const outDir = join(root, 'policies', 'build');

const { policySources, policySourceHash } = await tsImport('../src/policy/source-hash.ts', import.meta.url);

/** The bytes of one member of a .tar.gz (ustar; OPA's bundles use plain short names). */
function extractFromTarGz(archive, wanted) {
  const tar = gunzipSync(archive);
  for (let offset = 0; offset + 512 <= tar.length;) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start, length) =>
      header
        .subarray(start, start + length)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter(Boolean).join('/').replace(/^\/+/, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    if (name === wanted) return tar.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error(`${wanted} not found in the opa bundle`);
}

/** Refuses a deny rule whose METADATA is incomplete or invalid, by file, line and rule (src/policy/deny-rules.ts). */
export async function denyRuleProblems(at = root) {
  const rules = await tsImport('../src/policy/deny-rules.ts', import.meta.url);
  return rules.denyRuleProblems(at);
}

async function build() {
  const opa = requireTool(opaPath);
  const sources = policySources(root);
  if (sources.length === 0) throw new Error('no policy sources under policies/');
  const problems = await denyRuleProblems();
  if (problems.length > 0) throw new Error(`refused, a deny rule's METADATA is incomplete or invalid:\n  ${problems.join('\n  ')}`);
  const opaVersion = /^Version: (\S+)/m.exec(execFileSync(opa, ['version'], { encoding: 'utf8' }))?.[1];
  if (!opaVersion) throw new Error(`cannot read the version of ${opa}`);

  const work = mkdtempSync(join(tmpdir(), 'portcullis-policies-'));
  try {
    const bundle = join(work, 'bundle.tar.gz');
    // Explicit file list rather than the directory: the bundle gets exactly the hashed sources, never
    // tests or test data.
    execFileSync(opa, ['build', '-t', 'wasm', '-e', entrypoint, '-o', bundle, ...sources], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const wasm = extractFromTarGz(readFileSync(bundle), 'policy.wasm');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'admission.wasm'), wasm);
    const manifest = { opaVersion, entrypoint, sourceHash: policySourceHash(root), sources };
    writeFileSync(join(outDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    console.log(`policies: built ${relative(root, outDir)}/admission.wasm (${wasm.length} bytes, opa ${opaVersion})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    if (process.argv.includes('--print-hash')) console.log(policySourceHash(root));
    else await build();
  } catch (error) {
    console.error(`policies-build: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
}
