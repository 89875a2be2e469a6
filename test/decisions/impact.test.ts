/**
 * `portcullis policy impact` and GET /admin/policy/impact: the recorded decisions of a period replayed under
 * a candidate whose one rule changed (secret-hygiene: redact -> block) name exactly the calls that rule
 * flips — by receipt, counted by code and per principal hash — in the terminal and as JSON; and with
 * `policy.requireImpactReport` a reload of that change is refused until a report was made for it.
 */
import { expect } from 'chai';
import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { editFile, REPO, type TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { secretSamples } from '../guard/helpers/secrets.js';
import { principalHash } from '../../src/decisions/record.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

const AWS = secretSamples().find((s) => s.name === 'aws AKIA')!.value;
const blockSecrets = (t: string) => t.replace(/(- id: secret-hygiene\n\s+action: )redact/, '$1block');

describe('policy impact of a changed rule (real upstream)', function () {
  this.timeout(180_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  let env: Record<string, string>;
  const flipped: string[] = [];
  const principals: string[] = [];
  let candidate: string;

  before(async () => {
    d = await startDecisionGateway();
    ({ gw, env } = d);
    const a = await gw.principal();
    const b = await gw.principal();
    principals.push(a.id, b.id);
    const secret = () => ({ ...body(), messages: [{ role: 'user', content: `what is wrong with ${AWS}?` }] });
    for (const [p, req, flips] of [
      [a, body(), false],
      [a, secret(), true],
      [b, secret(), true],
      [a, body(), false],
      [b, body('red-whitehacker-a'), false],
      [b, secret(), true],
    ] as const) {
      const r = await gw.chat(p.token, req);
      if (flips) {
        expect(r.status).to.equal(200);
        flipped.push(r.body.receiptId);
      }
    }
    // The candidate holds only the folder it changes (rules/, schemas beside); the rest comes from the live root.
    candidate = mkdtempSync(join(tmpdir(), 'candidate-'));
    cpSync(join(REPO, 'rules'), join(candidate, 'rules'), { recursive: true });
    editFile(candidate, 'rules/guardrails.yaml', blockSecrets);
  });
  after(() => d?.stop());

  it('names exactly the calls the changed rule flips, as JSON', async () => {
    const r = await cli(['policy', 'impact', '--candidate', candidate, '--since', '1h', '--json'], env);
    expect(r.code, r.stderr).to.equal(0);
    const report = JSON.parse(r.stdout);
    expect(report.decisions).to.equal(6);
    expect(report.changed).to.equal(3);
    expect(report.changes.map((c: any) => c.receipt_id).sort()).to.deep.equal([...flipped].sort());
    expect(report.byCode).to.deep.equal({ 'admitted -> guardrail-blocked': 3 });
    expect(report.byPrincipal).to.deep.equal({ [principalHash(principals[0])]: 1, [principalHash(principals[1])]: 2 });
    expect(report.changes[0].fields).to.include.members(['allow', 'denials', 'guardrails']);
    // Per principal by hash: no principal id in the report.
    for (const id of principals) expect(r.stdout).to.not.include(id);
  });

  it('prints the same in the terminal', async () => {
    const r = await cli(['policy', 'impact', '--candidate', candidate, '--since', '1h'], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.include('6 decision(s) replayed, 3 would change').and.include('admitted -> guardrail-blocked  3');
    expect(r.stdout).to.include(`${principalHash(principals[1])}  2`);
    for (const id of flipped) expect(r.stdout).to.include(id);
  });

  it('reports no change for a candidate that changes nothing', async () => {
    const same = mkdtempSync(join(tmpdir(), 'candidate-'));
    const r = await cli(['policy', 'impact', '--candidate', same, '--since', '1h', '--json'], env);
    expect(r.code, r.stderr).to.equal(0);
    expect(JSON.parse(r.stdout)).to.include({ decisions: 6, changed: 0 });
  });

  it('the admin API reports on the change on disk, and requireImpactReport holds a reload until it has', async () => {
    editFile(gw.root, 'config/gateway.yaml', (t) => `${t}\npolicy:\n  requireImpactReport: true\n`);
    // Nothing of the policy or rules changed: the reload goes through (and turns the requirement on).
    expect((await gw.admin('POST', '/reload')).status).to.equal(200);
    editFile(gw.root, 'rules/guardrails.yaml', blockSecrets);
    const refused = await gw.admin('POST', '/reload');
    expect(refused.status).to.equal(409);
    expect(refused.body.error.code).to.equal('impact-report-required');
    expect(gw.holder.current.bundle.guardrails.data['rules']).to.satisfy((rules: any[]) => rules.find((x) => x.id === 'secret-hygiene').action === 'redact');

    const report = await gw.admin('GET', '/policy/impact?since=1h');
    expect(report.status).to.equal(200);
    expect(report.body.changes.map((c: any) => c.receipt_id).sort()).to.deep.equal([...flipped].sort());
    const viaCli = await cli(['policy', 'impact', '--since', '1h'], env);
    expect(viaCli.stdout).to.include('3 would change');

    expect((await gw.admin('POST', '/reload')).status).to.equal(200);
    const after = await gw.chat((await gw.principal()).token, { ...body(), messages: [{ role: 'user', content: `and ${AWS}?` }] });
    expect(after.status).to.equal(403);
    expect(after.body.error.code).to.equal('guardrail-blocked');
  });
});
