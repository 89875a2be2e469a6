/**
 * Denial codes are the policy's data. Each deny rule's code, HTTP status and message come from its own
 * METADATA and body; the error table (src/errors.ts) and docs/errors.md are held here to every code the
 * shipped policy can emit, and a rule added in Rego alone — a code the table has never heard of — is
 * answered as the policy says (403, its message) with a receipt, never as a 500.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import { ERRORS, fromDenial, isErrorCode } from '../../src/errors.js';
import { REPO } from '../helpers/gateway.js';
import { startWorld, type World } from '../helpers/world.js';
import { buildPolicies, embargoRule, opaTest, pinnedOpa, policyRoot } from './helpers.js';

interface RuleAnnotation {
  path: Array<{ value: string }>;
  annotations?: { custom?: { code?: string; status?: number; step?: number; rank?: number } };
  location: { file: string; row: number };
}

/** Every deny rule's METADATA, as `opa inspect -a` reads it from the Rego. */
function denyRules(root = REPO): RuleAnnotation[] {
  const out = execFileSync(pinnedOpa(), ['inspect', '-a', '-f', 'json', 'policies'], { cwd: root, encoding: 'utf8', maxBuffer: 16 << 20 });
  const all = (JSON.parse(out) as { annotations: RuleAnnotation[] }).annotations;
  return all.filter((a) => a.path.at(-1)?.value === 'deny');
}

const EMBARGO_TEST = `package admission_embargo_test

import data.admission

embargoed := {
	"principal": {"id": "did:web:example.test:tenant:embargoed-1", "rung": null, "rungExpired": false, "aup": false, "scopes": []},
	"model": "shared-general-a",
	"task": "code-review",
	"scopeId": null,
	"findings": [],
}

test_an_embargoed_tenant_is_refused if {
	result := admission.decision with input as embargoed
		with data.catalog as admission.testdata.fixture.catalog
		with data.rules as admission.testdata.fixture.rules
	result.denials[0].code == "tenant-embargoed"
	result.denials[0].status == 403
}
`;

describe('policy: denial codes are data', () => {
  it('every deny rule names its code, step and rank, and a status the error table agrees with', () => {
    const rules = denyRules();
    expect(rules.length).to.be.at.least(10);
    const docs = readFileSync(join(REPO, 'docs/errors.md'), 'utf8');
    for (const rule of rules) {
      const custom = rule.annotations?.custom ?? {};
      const where = `${rule.location.file}:${rule.location.row}`;
      expect(custom.code, where).to.be.a('string');
      expect(custom.step, where).to.be.a('number');
      expect(custom.rank, where).to.be.a('number');
      const status = custom.status ?? 403;
      // `<rung>` stands for the lowest rung that opens the band: every table code of that shape must agree.
      const codes = custom.code!.includes('<rung>')
        ? Object.keys(ERRORS).filter((c) => new RegExp(`^${custom.code!.replace('<rung>', '[a-z0-9-]+')}$`).test(c))
        : [custom.code!];
      expect(codes, where).to.not.be.empty;
      for (const code of codes) {
        expect(isErrorCode(code), `${code} (${where}) is in src/errors.ts`).to.equal(true);
        expect(ERRORS[code as keyof typeof ERRORS].status, `${code}: the table's status is the rule's`).to.equal(status);
        expect(docs, `${code} is documented in docs/errors.md`).to.include(`\`${code}\``);
      }
    }
  });

  it('answers a code the table does not know with the policy status and message, never a 500', () => {
    const unknown = fromDenial('tenant-embargoed', 'this tenant is under an embargo', 403);
    expect([unknown.status, unknown.code, unknown.message]).to.deep.equal([403, 'tenant-embargoed', 'this tenant is under an embargo']);
    // A status that is not a refusal (no 2xx, 3xx or 5xx from a denial) falls back to 403.
    expect(fromDenial('tenant-embargoed', 'm', 500).status).to.equal(403);
    expect(fromDenial('tenant-embargoed', 'm', 451).status).to.equal(451);
  });

  describe('a deny rule added in Rego alone, end to end', function () {
    this.timeout(120_000);
    let w: World;
    let root: string;

    before(async () => {
      // The author's steps (docs/policy.md): write the rule and its test, run the tests, build, serve.
      root = policyRoot();
      appendFileSync(join(root, 'policies/admission/admission.rego'), embargoRule(3, 8, 'this tenant is under an embargo; contact the operator'));
      writeFileSync(join(root, 'policies/admission/embargo_test.rego'), EMBARGO_TEST);
      expect(await opaTest(root)).to.match(/PASS: \d+\/\d+/);
      await buildPolicies(root);
      w = await startWorld({ root });
    });
    after(() => w?.stop());

    it('refuses the call with 403, the new code, the rule message and a receipt id', async () => {
      const p = await w.gw.principal({ tenant: `embargoed-${Date.now().toString(36)}` });
      const res = await w.gw.chat(p.token, { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('tenant-embargoed');
      expect(res.body.error.message).to.equal('this tenant is under an embargo; contact the operator');
      expect(res.body.error.type).to.equal('permission_error');
      expect(res.body.error.receiptId).to.match(/^rcpt_/);
      expect(res.headers.get('x-receipt-id')).to.equal(res.body.error.receiptId);
      expect(await w.upstream.requests()).to.have.length(0);
      const receipt = await w.gw.admin('GET', `/receipts/${res.body.error.receiptId}`);
      expect(receipt.body.outcome).to.equal('refused');
      expect(receipt.body.error.code).to.equal('tenant-embargoed');
    });

    it('serves every other tenant as before', async () => {
      const p = await w.gw.principal();
      const res = await w.gw.chat(p.token, { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      expect(res.status).to.equal(200);
    });
  });
});
