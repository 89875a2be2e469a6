/**
 * An impact report names only receipts that exist: decisions whose call left no receipt — an identical
 * request answered from its finished job, a call refused at step 2 (model-not-found) — are kept out of the
 * counts and the changes and counted apart (`withoutReceipt`), on the admin API and in the CLI, so the
 * counts are of real calls and every receipt id the report names can be looked at.
 */
import { expect } from 'chai';
import { appendFileSync, cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, type TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { buildPolicies, embargoRule } from '../policy/helpers.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

describe('policy impact names only receipts that exist (real upstream, opa)', function () {
  this.timeout(180_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  let env: Record<string, string>;
  let candidate: string;
  const receipts = new Set<string>();

  before(async () => {
    d = await startDecisionGateway();
    ({ gw, env } = d);
    const p = await gw.principal({ tenant: `embargoed-${process.pid}` });
    const same = { ...body(), messages: [{ role: 'user', content: 'the same request twice' }] };
    for (const b of [same, same, { ...body(), messages: [{ role: 'user', content: 'another call' }] }]) {
      const r = await gw.chat(p.token, b);
      expect(r.status).to.equal(200);
      receipts.add(r.body.receiptId);
    }
    expect(receipts.size).to.equal(2);
    const unknown = await gw.chat(p.token, { ...body(), model: 'no-such-model' });
    expect(unknown.body.error.code).to.equal('model-not-found');
    // The candidate refuses that tenant at step 1: every one of its decisions would change.
    candidate = mkdtempSync(join(tmpdir(), 'candidate-'));
    cpSync(join(REPO, 'policies'), join(candidate, 'policies'), { recursive: true });
    appendFileSync(join(candidate, 'policies/admission/admission.rego'), embargoRule(1, 1));
    await buildPolicies(candidate);
  });
  after(() => d?.stop());

  it('counts the two calls with receipts, names only their receipts, and the step-2 refusal apart', async () => {
    const r = await cli(['policy', 'impact', '--candidate', candidate, '--since', '1h', '--json'], env);
    expect(r.code, r.stderr).to.equal(0);
    const report = JSON.parse(r.stdout);
    expect(report).to.include({ decisions: 2, changed: 2 });
    expect(new Set(report.changes.map((c: any) => c.receipt_id))).to.deep.equal(receipts);
    for (const id of receipts) expect((await gw.admin('GET', `/receipts/${id}`)).status).to.equal(200);
    expect(report.byCode).to.deep.equal({ 'admitted -> tenant-embargoed': 2 });
    // The repeat re-attached to its finished job before admission (no decision, no receipt); the refusal at
    // step 2 was decided and recorded, but left no receipt.
    expect(report.withoutReceipt).to.deep.equal({ decisions: 1, changed: 1, byCode: { 'model-not-found -> tenant-embargoed': 1 } });
    const text = await cli(['policy', 'impact', '--candidate', candidate, '--since', '1h'], env);
    expect(text.stdout).to.include('2 decision(s) replayed, 2 would change').and.include('not counted: 1 decision(s) whose call left no receipt');
  });

  it('the listing says which decisions left no receipt, when asked', async () => {
    const all = (await gw.admin('GET', '/decisions?since=1h&kind=live')).body;
    expect(all.data).to.have.length(3);
    expect(all).to.not.have.property('noReceipt');
    const marked = (await gw.admin('GET', '/decisions?since=1h&kind=live&receipts=true')).body;
    expect(marked.noReceipt).to.have.length(1);
    const withReceipt = marked.data.filter((d: any) => !marked.noReceipt.includes(d.decision_id)).map((d: any) => `rcpt_${d.call_id}`);
    expect(new Set(withReceipt)).to.deep.equal(receipts);
  });
});
