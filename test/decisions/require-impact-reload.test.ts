/**
 * `policy.requireImpactReport` holds every reload, not only POST /admin/reload: a rule change the file
 * watcher picks up, or one SIGHUP asks for (main.ts reloads with reason `SIGHUP`), is refused and logged
 * while no impact report was made for it, and the live rules keep deciding calls; once the report is made
 * the same reload goes through.
 */
import { expect } from 'chai';
import { editFile, type TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { createLogger } from '../../src/log.js';
import type { ReloadResult } from '../../src/config/reloader.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

const blockPasskeys = (t: string) => t.replace(/(- id: pii-passkeys\n\s+action: )flag/, '$1block');
const passkeyQuestion = () => ({ ...body(), messages: [{ role: 'user', content: 'where should a passkey live?' }] });

describe('requireImpactReport holds the file watcher and SIGHUP too (real upstream)', function () {
  this.timeout(120_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  const logged: string[] = [];
  const action = () =>
    (gw.holder.current.bundle.guardrails.data['rules'] as Array<{ id: string; action: string }>).find((r) => r.id === 'pii-passkeys')!.action;
  const nextReload = () => new Promise<ReloadResult>((resolve) => gw.holder.onReload((result) => resolve(result)));

  before(async () => {
    d = await startDecisionGateway({ policy: { requireImpactReport: true }, log: createLogger('info', (line) => void logged.push(line)) });
    gw = d.gw;
  });
  after(() => d?.stop());

  it('the file watcher and SIGHUP refuse an unreported rule change, keep the live rules and log why', async () => {
    expect(action()).to.equal('flag');
    editFile(gw.root, 'rules/guardrails.yaml', blockPasskeys);
    const bySighup = await gw.holder.reload('SIGHUP');
    expect(bySighup.ok).to.equal(false);
    expect(JSON.stringify(bySighup)).to.include('impact-report-required');
    expect(action()).to.equal('flag');

    gw.holder.watch(50);
    const watched = nextReload();
    editFile(gw.root, 'rules/guardrails.yaml', (t) => `${t}# touched\n`);
    const byWatcher = await watched;
    expect(byWatcher.ok).to.equal(false);
    expect(JSON.stringify(byWatcher)).to.include('impact-report-required');
    expect(action()).to.equal('flag');
    const p = await gw.principal();
    expect((await gw.chat(p.token, passkeyQuestion())).status).to.equal(200);
    const rejected = logged.filter((l) => l.includes('config.reload.rejected') && l.includes('impact-report-required'));
    expect(rejected.some((l) => l.includes('SIGHUP'))).to.equal(true);
    expect(rejected.some((l) => l.includes('change in rules/'))).to.equal(true);
  });

  it('once an impact report was made for the change, SIGHUP applies it', async () => {
    expect((await gw.admin('GET', '/policy/impact?since=1h')).status).to.equal(200);
    const r = await gw.holder.reload('SIGHUP');
    expect(r.ok).to.equal(true);
    expect(action()).to.equal('block');
    const p = await gw.principal();
    const refused = await gw.chat(p.token, passkeyQuestion());
    expect(refused.status).to.equal(403);
  });
});
