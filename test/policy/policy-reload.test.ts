/**
 * The policy is a reloadable input like the YAML: the gateway serves the bundle of its own root, every
 * way of reloading (admin API, file watch) refuses a bundle whose Rego changed since it was built and keeps
 * the running policy, a rebuild is then served, and `portcullis check` says the same offline. The policy
 * gate refuses a deny rule no test reaches, whatever the overall coverage.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import type { ReloadRecord, ReloadResult } from '../../src/config/reloader.js';
import { cli } from '../helpers/cli.js';
import { REPO, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { buildPolicies, embargoRule, policyRoot } from './helpers.js';

const nextReload = (gw: TestGateway) =>
  new Promise<{ result: ReloadResult; record: ReloadRecord }>((resolve) => {
    let done = false;
    gw.holder.onReload((result, record) => {
      if (!done) ((done = true), resolve({ result, record }));
    });
  });

describe('policy: a reloadable input', function () {
  this.timeout(120_000);

  it('serves the bundle of PORTCULLIS_ROOT, refuses it on reload once its Rego changed, and serves the rebuild', async () => {
    const root = policyRoot();
    const gw = await startTestGateway({ root });
    try {
      const before = gw.holder.current.versions.policy;
      appendFileSync(join(root, 'policies/admission/admission.rego'), embargoRule(3, 8));
      const stale = await gw.admin('POST', '/reload');
      expect(stale.status).to.equal(422);
      expect(stale.body.error.code).to.equal('config-invalid');
      expect(stale.body.error.message).to.include('policy bundle is stale').and.include('npm run policies:build');
      expect(gw.holder.current.versions.policy).to.equal(before);

      await buildPolicies(root);
      const ok = await gw.admin('POST', '/reload');
      expect(ok.status).to.equal(200);
      expect(ok.body.versions.policy).to.not.equal(before);
      expect(gw.holder.current.versions.policy).to.equal(ok.body.versions.policy);
    } finally {
      await gw.close();
    }
  });

  it('watches policies/: a Rego edit is refused by name at once, and the rebuild is served without a signal', async () => {
    const root = policyRoot();
    const gw = await startTestGateway({ root });
    gw.holder.watch(20);
    try {
      const before = gw.holder.current.versions.policy;
      const refused = nextReload(gw);
      appendFileSync(join(root, 'policies/admission/admission.rego'), embargoRule(3, 8));
      const first = await refused;
      expect(first.result.ok).to.equal(false);
      expect(first.record.reason).to.equal('change in policies/');
      expect((first.result as { problems: string[] }).problems.join('\n')).to.include('policy bundle is stale');
      expect(gw.holder.current.versions.policy).to.equal(before);

      // The build writes the wasm and then the manifest: wait for the reload that serves the new policy.
      const served = new Promise<void>((resolve) => gw.holder.onSwap((next) => next.versions.policy !== before && resolve()));
      await buildPolicies(root);
      await served;
      expect(gw.holder.current.versions.policy).to.not.equal(before);
    } finally {
      await gw.close();
    }
  });

  it('`portcullis check` names a stale bundle offline', async () => {
    const root = policyRoot();
    expect((await cli(['check', '--root', root])).code).to.equal(0);
    appendFileSync(join(root, 'policies/admission/admission.rego'), embargoRule(3, 8));
    const stale = await cli(['check', '--root', root]);
    expect(stale.code).to.equal(1);
    expect(stale.stderr).to.include('policy bundle is stale');
  });

  it('the policy gate refuses a deny rule no test reaches, though overall coverage stays above the floor', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'portcullis-gate-'));
    for (const dir of ['policies', '.regal']) cpSync(join(REPO, dir), join(copy, dir), { recursive: true });
    mkdirSync(join(copy, 'scripts'));
    for (const f of ['policies-check.sh', 'policies-rule-coverage.mjs', 'policies-build.mjs', 'tools.mjs', 'tools.env'])
      cpSync(join(REPO, 'scripts', f), join(copy, 'scripts', f));
    // The gate checks deny-rule METADATA with src/policy/deny-rules.ts (through tsx).
    for (const dir of ['src', 'node_modules']) symlinkSync(join(REPO, dir), join(copy, dir));
    const gate = () =>
      promisify(execFile)('bash', [join(copy, 'scripts/policies-check.sh')]).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
    expect((await gate()).code, 'the shipped policy passes').to.equal(0);
    appendFileSync(join(copy, 'policies/admission/admission.rego'), embargoRule(3, 8));
    const refused = await gate();
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.match(/admission\.rego:\d+ {2}deny rule tenant-embargoed is reached by no test/);
  });
});
