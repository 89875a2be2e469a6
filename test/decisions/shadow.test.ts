/**
 * Shadow evaluation: with `policy.shadow` naming a candidate folder, the candidate is asked beside the live
 * policy on live traffic. It decides nothing (the live answer stands), and each disagreement is counted in
 * the metrics and kept as a decision record of kind `shadow` that names the live one.
 */
import { expect } from 'chai';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { configRoot, editFile, REPO, type TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { provenReceipt } from '../helpers/receipts.js';
import { secretSamples } from '../guard/helpers/secrets.js';
import type { DecisionRecord } from '../../src/decisions/record.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

const AWS = secretSamples().find((s) => s.name === 'aws AKIA')!.value;

async function metric(gw: TestGateway, agreement: string): Promise<number> {
  const text = await (await fetch(`${gw.adminUrl}/metrics`, { headers: { authorization: `Bearer ${gw.adminToken}` } })).text();
  const m = new RegExp(`^portcullis_shadow_decisions_total\\{agreement="${agreement}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The shadow records of the period, once `n` of them are there (the shadow answers after the call goes on). */
async function shadowRecords(gw: TestGateway, n: number): Promise<DecisionRecord[]> {
  for (let i = 0; ; i++) {
    const data = (await gw.admin('GET', '/decisions?since=1h&kind=shadow')).body.data as DecisionRecord[];
    if (data.length >= n || i > 100) return data;
    await sleep(50);
  }
}

describe('shadow evaluation of a candidate policy on live traffic (real upstream)', function () {
  this.timeout(60_000);
  let d: DecisionGateway;
  let gw: TestGateway;

  before(async () => {
    const root = configRoot();
    cpSync(join(REPO, 'rules'), join(root, 'candidate/rules'), { recursive: true });
    editFile(root, 'candidate/rules/guardrails.yaml', (t) => t.replace(/(- id: secret-hygiene\n\s+action: )redact/, '$1block'));
    d = await startDecisionGateway({ root, policy: { shadow: 'candidate' } });
    gw = d.gw;
  });
  after(() => d?.stop());

  it('decides nothing, counts the disagreements and keeps them as shadow records', async () => {
    const [agree0, disagree0] = [await metric(gw, 'agree'), await metric(gw, 'disagree')];
    const p = await gw.principal();
    const plain = await gw.chat(p.token, body());
    const secret = await gw.chat(p.token, { ...body(), messages: [{ role: 'user', content: `is ${AWS} live?` }] });
    // The live policy answers: the secret is redacted, not blocked as the shadow would.
    expect(plain.status).to.equal(200);
    expect(secret.status).to.equal(200);
    const shadows = await shadowRecords(gw, 1);
    expect(shadows).to.have.length(1);
    const live = await provenReceipt(gw.apiUrl, p.token, secret.body.receiptId);
    const s = shadows[0]!;
    expect(s.shadow_of).to.equal(live['decision'].record.id);
    expect(s.labels).to.include({ kind: 'shadow' });
    expect(s.result.allow).to.equal(false);
    expect(s.result.denials[0]!.code).to.equal('guardrail-blocked');
    expect(s.documents['guardrails']).to.not.equal(gw.holder.current.bundle.guardrails.sha256);
    expect(live['decision'].allow).to.equal(true);
    expect(await metric(gw, 'disagree')).to.equal(disagree0 + 1);
    expect(await metric(gw, 'agree')).to.equal(agree0 + 1);
  });
});
