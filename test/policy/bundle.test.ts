/**
 * The committed bundle (policies/build/admission.wasm + manifest.json) must be built from the Rego in the
 * tree, by the pinned opa: a Rego edit without `npm run policies:build` fails here rather than serving
 * the old policy.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ENTRYPOINT, loadPolicyEngine, readPolicyManifest } from '../../src/policy/engine.js';
import { policySourceHash, policySources, REPO_ROOT } from '../../src/policy/source-hash.js';

const stale = 'policies/build is stale: run `npm run policies:build` and commit policies/build/';

describe('policy: compiled bundle', () => {
  const manifest = readPolicyManifest();

  it('was built from the current Rego sources', () => {
    expect(manifest.sources, stale).to.deep.equal(policySources());
    expect(manifest.sourceHash, stale).to.equal(policySourceHash());
  });

  it('was built by the pinned opa (scripts/tools.env)', () => {
    const pinned = /^OPA_VERSION=v?(\S+)$/m.exec(readFileSync(join(REPO_ROOT, 'scripts/tools.env'), 'utf8'))?.[1];
    expect(manifest.opaVersion, stale).to.equal(pinned);
  });

  it('hashes the sources the same way as the build script', () => {
    const fromScript = execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/policies-build.mjs'), '--print-hash'], {
      encoding: 'utf8',
    }).trim();
    expect(fromScript).to.equal(policySourceHash());
  });

  it('exposes the admission/decision entrypoint', async () => {
    expect(manifest.entrypoint).to.equal(ENTRYPOINT);
    await loadPolicyEngine(); // throws when the wasm lacks the entrypoint
  });
});
