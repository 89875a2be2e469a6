/**
 * Decision records are kept for `policy.decisionRetentionDays` on the gateway's clock, then gone: the
 * admin API answers 404 decision-not-found for them, and the receipt that names one still verifies but
 * can no longer be replayed (`record found` fails, by name).
 */
import { expect } from 'chai';
import type { TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

const DAY = 86_400_000;

describe('decision records: retention from config (memory store, moved clock)', function () {
  this.timeout(60_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  let clock = Date.now();

  before(async () => {
    d = await startDecisionGateway({ policy: { decisionRetentionDays: 2 }, now: () => clock });
    gw = d.gw;
  });
  after(() => d?.stop());

  it('keeps a record for the configured days, then drops it', async () => {
    const p = await gw.principal();
    const first = await gw.chat(p.token, body());
    const receipt = (await gw.admin('GET', `/receipts/${first.body.receiptId}`)).body;
    const id = receipt.decision.record.id as string;
    clock += 1 * DAY;
    await gw.chat(p.token, body());
    expect((await gw.admin('GET', `/decisions/${id}`)).status).to.equal(200);
    clock += 1.5 * DAY;
    await gw.chat(p.token, body());
    const gone = await gw.admin('GET', `/decisions/${id}`);
    expect(gone.status).to.equal(404);
    expect(gone.body.error.code).to.equal('decision-not-found');
    const r = await cli(['decision', 'replay', first.body.receiptId], d.env);
    expect(r.code).to.equal(1);
    expect(r.stdout).to.include('FAIL record found').and.include('past its retention');
  });
});
