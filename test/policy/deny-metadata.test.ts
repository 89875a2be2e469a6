/**
 * A deny rule is never silently ineffective. A rule whose METADATA lacks `code`, `step` or `rank`, names a
 * step the gateway does not enforce, a code that is not a lower-kebab-case string, or a status that is not
 * 4xx (or differs from a shipped code's) is refused by name by the build, `portcullis check`, every reload
 * and the policy gate. Should such a rule be compiled anyway, a match still refuses: the wasm answers
 * `policy-rule-invalid` (403, step 3, so a receipt is left) instead of leaving the denial undefined.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { parse } from 'yaml';
import { fromDenial, toWire } from '../../src/errors.js';
import { loadPolicyEngine, type PolicyData } from '../../src/policy/engine.js';
import { cli } from '../helpers/cli.js';
import { REPO, startTestGateway } from '../helpers/gateway.js';
import { buildPolicies, pinnedOpa, policyRoot } from './helpers.js';

const rule = (custom: string) => `
# METADATA
# title: Tenant embargoed
# custom:
${custom
  .split('\n')
  .map((l) => `#   ${l}`)
  .join('\n')}
deny contains denial(rego.metadata.rule(), "this tenant is under an embargo") if {
	contains(input.principal.id, ":tenant:embargoed-")
}
`;

const BROKEN: Array<[string, string, RegExp]> = [
  ['no rank', 'code: tenant-embargoed\nstep: 3', /deny rule tenant-embargoed: METADATA custom\.rank is missing/],
  ['no step', 'code: tenant-embargoed\nrank: 8', /deny rule tenant-embargoed: METADATA custom\.step is missing/],
  ['no code', 'step: 3\nrank: 8', /deny rule: METADATA custom\.code is missing/],
  ['step 9', 'code: tenant-embargoed\nstep: 9\nrank: 1', /custom\.step 9 is not an admission step/],
  ['a numeric code', 'code: 12345\nstep: 3\nrank: 8', /custom\.code 12345 is not a lower-kebab-case string/],
  ['status 503', 'code: tenant-embargoed\nstep: 3\nrank: 8\nstatus: 503', /custom\.status 503 is not a 4xx HTTP status/],
  ['status "teapot"', 'code: tenant-embargoed\nstep: 3\nrank: 8\nstatus: teapot', /custom\.status "teapot" is not a 4xx/],
  [
    'a shipped code with another status',
    'code: insufficient-credits\nstep: 3\nrank: 8\nstatus: 418',
    /differs from the status of the shipped code insufficient-credits \(402\)/,
  ],
];

describe('policy: deny rules with incomplete or invalid METADATA', function () {
  this.timeout(180_000);

  for (const [what, custom, named] of BROKEN) {
    it(`a rule with ${what}: the build and \`portcullis check\` refuse it by file, line and rule`, async () => {
      const root = policyRoot();
      appendFileSync(join(root, 'policies/admission/admission.rego'), rule(custom));
      const build = await buildPolicies(root).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(build.code, 'the build refuses').to.equal(1);
      expect(build.stderr)
        .to.match(/policies\/admission\/admission\.rego:\d+: /)
        .and.match(named);
      const check = await cli(['check', '--root', root]);
      expect(check.code).to.equal(1);
      expect(check.stderr).to.match(named);
    });
  }

  it('a reload refuses such a rule by name and keeps serving the running policy', async () => {
    const root = policyRoot();
    const gw = await startTestGateway({ root });
    try {
      const before = gw.holder.current.versions.policy;
      appendFileSync(join(root, 'policies/admission/admission.rego'), rule('code: tenant-embargoed\nstep: 3'));
      const refused = await gw.admin('POST', '/reload');
      expect(refused.status).to.equal(422);
      expect(refused.body.error.message).to.match(/deny rule tenant-embargoed: METADATA custom\.rank is missing/);
      expect(gw.holder.current.versions.policy).to.equal(before);
    } finally {
      await gw.close();
    }
  });

  it('the policy gate refuses it too', async () => {
    const copy = mkdtempSync(join(tmpdir(), 'portcullis-gate-'));
    for (const dir of ['policies', '.regal']) cpSync(join(REPO, dir), join(copy, dir), { recursive: true });
    mkdirSync(join(copy, 'scripts'));
    for (const f of ['policies-check.sh', 'policies-rule-coverage.mjs', 'policies-build.mjs', 'tools.mjs', 'tools.env'])
      cpSync(join(REPO, 'scripts', f), join(copy, 'scripts', f));
    for (const dir of ['src', 'node_modules']) symlinkSync(join(REPO, dir), join(copy, dir));
    appendFileSync(join(copy, 'policies/admission/admission.rego'), rule('code: tenant-embargoed\nstep: 3'));
    const gate = await promisify(execFile)('bash', [join(copy, 'scripts/policies-check.sh')]).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(gate.code).to.equal(1);
    expect(gate.stderr).to.match(/admission\.rego:\d+: deny rule tenant-embargoed: METADATA custom\.rank is missing/);
  });

  it('compiled anyway (opa build by hand), a match still refuses with a well-formed 403', async () => {
    const root = policyRoot();
    appendFileSync(join(root, 'policies/admission/admission.rego'), rule('code: tenant-embargoed\nstep: 3'));
    const out = mkdtempSync(join(tmpdir(), 'portcullis-wasm-'));
    const run = promisify(execFile);
    await run(pinnedOpa(), ['build', '-t', 'wasm', '-e', 'admission/decision', '-o', join(out, 'b.tar.gz'), 'policies/admission/admission.rego'], {
      cwd: root,
    });
    await run('tar', ['-xzf', join(out, 'b.tar.gz'), '-C', out, '/policy.wasm']);
    const engine = await loadPolicyEngine(join(out, 'policy.wasm'));
    const table = parse(readFileSync(join(REPO, 'policies/admission/testdata/cases.yaml'), 'utf8')) as { fixture: PolicyData };
    engine.setData(table.fixture);
    const model = Object.keys(table.fixture.catalog.models).find((m) => table.fixture.catalog.models[m]!.team === 'blue')!;
    const task = table.fixture.catalog.models[model]!.tasks[0]!;
    const decision = engine.decide({
      principal: { id: 'did:web:x:tenant:embargoed-x', rung: null, rungExpired: false, aup: false, scopes: [] },
      model,
      task,
      scopeId: null,
      findings: [],
    });
    expect(decision.allow).to.equal(false);
    const first = decision.denials[0]!;
    expect(first).to.include({ code: 'policy-rule-invalid', step: 3, status: 403 });
    const err = fromDenial(first.code, first.message, first.status);
    expect(err.status).to.equal(403);
    expect(toWire(err, 'rcpt_x').error).to.include({ code: 'policy-rule-invalid', receiptId: 'rcpt_x' });
  });
});
