/**
 * `portcullis decision replay`: every receipt of a run that crossed two policy versions and a rules reload
 * replays to the same decision (opa-wasm and `opa eval`), by receipt id and from a receipt file; and a
 * tampered decision record, policy bundle or receipt is caught, each by name.
 */
import { expect } from 'chai';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { editFile, type TestGateway } from '../helpers/gateway.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { provenReceipt } from '../helpers/receipts.js';
import { secretSamples } from '../guard/helpers/secrets.js';
import { buildPolicies, embargoRule, policyRoot } from '../policy/helpers.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

const AWS = secretSamples().find((s) => s.name === 'aws AKIA')!.value;

describe('portcullis decision replay (real redis, upstream, opa)', function () {
  this.timeout(240_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  const calls: Array<{ receiptId: string; policy: string; rules: string; token: string; outcome: string }> = [];
  let env: Record<string, string>;

  before(async () => {
    d = await startDecisionGateway({ root: policyRoot(), redis: true });
    ({ gw, env } = d);
    const run = async (p: { id: string; token: string }, b: unknown) => {
      const r = await gw.chat(p.token, b);
      let receiptId = r.body?.receiptId as string | undefined;
      if (!receiptId) {
        const listed = (await gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts`)).body.data as Array<{ id: string; createdAt: string }>;
        receiptId = listed.sort((x, y) => (x.createdAt < y.createdAt ? -1 : 1)).at(-1)!.id;
      }
      calls.push({ receiptId, policy: gw.holder.current.versions.policy, rules: gw.holder.current.versions.rules, token: p.token, outcome: String(r.status) });
    };
    const round = async () => {
      const p = await gw.principal();
      await run(p, body());
      await run(p, { ...body(), messages: [{ role: 'user', content: `check ${AWS} please` }] });
      await run(await gw.principal(), body('red-whitehacker-a'));
      await run(await gw.principal({ tenant: `embargoed-${calls.length}` }), body());
    };
    await round();
    // A second policy version: a new deny rule, rebuilt and reloaded.
    appendFileSync(join(gw.root, 'policies/admission/admission.rego'), embargoRule(3, 8));
    await buildPolicies(gw.root);
    expect((await gw.admin('POST', '/reload')).status).to.equal(200);
    await round();
    // A rules reload: the rungs file changes (a task's band), the policy does not.
    editFile(gw.root, 'rules/rungs.yaml', (t) =>
      t.replace(/^version: .*$/m, 'version: "2099.1.1"').replace('remediation: { band: cyber', 'remediation: { band: code-review'),
    );
    expect((await gw.admin('POST', '/reload')).status).to.equal(200);
    await round();
  });
  after(() => d?.stop());

  it('replays every receipt of the run to the same decision, across two policy versions and a rules reload', async () => {
    expect(new Set(calls.map((c) => c.policy)).size).to.equal(2);
    expect(new Set(calls.map((c) => c.rules)).size).to.equal(2);
    // The embargo rule refuses only under the second policy: the run holds decisions the first would not take.
    expect(calls.map((c) => c.outcome)).to.deep.equal(['200', '200', '403', '200', '200', '200', '403', '403', '200', '200', '403', '403']);
    for (const c of calls) {
      const r = await cli(['decision', 'replay', c.receiptId], env);
      expect(r.code, `${c.receiptId}: ${r.stdout}${r.stderr}`).to.equal(0);
      expect(r.stdout)
        .to.include('same decision (opa-wasm, opa eval)')
        .and.include('ok   receipt in log')
        .and.include('ok   record hash')
        .and.include('ok   policy sources');
      expect(r.stdout).to.include(`policy ${c.policy}, rules ${c.rules}`);
    }
  });

  it('replays a receipt file as GET /v1/receipts/{id} answers it, and reports as JSON', async () => {
    const c = calls[1]!;
    const file = join(mkdtempSync(join(tmpdir(), 'replay-')), 'receipt.json');
    writeFileSync(file, JSON.stringify(await provenReceipt(gw.apiUrl, c.token, c.receiptId)));
    const r = await cli(['decision', 'replay', file, '--json'], env);
    expect(r.code, r.stdout + r.stderr).to.equal(0);
    const report = JSON.parse(r.stdout);
    expect(report).to.include({ ok: true, same: true, receipt: c.receiptId });
    expect(report.engines).to.deep.equal(['opa-wasm', 'opa eval']);
  });

  it('catches a tampered receipt: the log proof fails, and a changed record hash names the record', async () => {
    const c = calls[0]!;
    const receipt = await provenReceipt(gw.apiUrl, c.token, c.receiptId);
    const dir = mkdtempSync(join(tmpdir(), 'replay-'));
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ ...receipt, decision: { ...receipt['decision'], allow: false } }));
    const a = await cli(['decision', 'replay', join(dir, 'a.json')], env);
    expect(a.code).to.equal(1);
    expect(a.stdout).to.include('FAIL receipt in log').and.include('FAIL record binds');
    const sha = receipt['decision'].record.sha256 as string;
    writeFileSync(
      join(dir, 'b.json'),
      JSON.stringify({
        ...receipt,
        decision: { ...receipt['decision'], record: { ...receipt['decision'].record, sha256: sha.replace(/^./, sha[0] === '0' ? '1' : '0') } },
      }),
    );
    const b = await cli(['decision', 'replay', join(dir, 'b.json')], env);
    expect(b.code).to.equal(1);
    expect(b.stdout).to.include('FAIL receipt in log').and.include('FAIL record hash');
  });

  it('catches a tampered decision record and a tampered policy bundle in the store', async () => {
    const redisClient = createClient({ url: d.redis!.url });
    await redisClient.connect();
    try {
      // The record of an admitted call rewritten to a refusal: its hash no longer matches the receipt's.
      const c = calls[4]!;
      const got = (await gw.admin('GET', `/decisions/receipt/${c.receiptId}`)).body;
      const key = `pc:dec:r:${got.record.decision_id}`;
      const tampered = { ...got.record, result: { ...got.record.result, allow: false } };
      await redisClient.set(key, JSON.stringify(tampered), { KEEPTTL: true });
      const r = await cli(['decision', 'replay', c.receiptId], env);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.include('FAIL record hash').and.include('the record or the receipt was changed');
      await redisClient.set(key, JSON.stringify(got.record), { KEEPTTL: true });
      expect((await cli(['decision', 'replay', c.receiptId], env)).code).to.equal(0);

      // The first policy's stored wasm replaced by the second's: it no longer hashes to its version.
      const first = calls[0]!;
      const firstRecord = (await gw.admin('GET', `/decisions/receipt/${first.receiptId}`)).body.record;
      const field = (doc: string, sha: string) => `${doc} ${sha}`;
      const v1 = JSON.parse((await redisClient.hGet('pc:dec:v', field('policy', firstRecord.bundles.admission.revision)))!);
      const v2sha = (await gw.admin('GET', `/decisions/receipt/${calls[4]!.receiptId}`)).body.record.bundles.admission.revision;
      const v2 = JSON.parse((await redisClient.hGet('pc:dec:v', field('policy', v2sha)))!);
      await redisClient.hSet('pc:dec:v', field('policy', v1.sha256), JSON.stringify({ ...v1, content: v2.content }));
      const b = await cli(['decision', 'replay', first.receiptId], env);
      expect(b.code).to.equal(1);
      expect(b.stdout).to.include('FAIL version policy').and.include('does not hash to it: it was changed');
    } finally {
      await redisClient.close();
    }
  });

  it('catches Rego sources changed or removed in the version history, and a PORTCULLIS_OPA that is not there', async () => {
    const c = calls[4]!;
    const record = (await gw.admin('GET', `/decisions/receipt/${c.receiptId}`)).body.record;
    const field = `policy ${record.bundles.admission.revision}`;
    const served = (await (await fetch(`${gw.apiUrl}/v1/secure/history/policy/${record.bundles.admission.revision}`)).json()) as any;
    expect(served.sourceHash).to.be.a('string').and.equal(record.documents['policy-sources']);
    const redisClient = createClient({ url: d.redis!.url });
    await redisClient.connect();
    try {
      const orig = (await redisClient.hGet('pc:dec:v', field))!;
      const v = JSON.parse(orig);
      const path = 'policies/admission/admission.rego';
      // A rule added to the Rego after the fact (it does not touch this call), the wasm left as it was.
      const backdoor = { ...v, sources: { ...v.sources, [path]: `${v.sources[path]}\nbackdoor if contains(input.principal.id, ":tenant:friend-")\n` } };
      // Even with the served sourceHash rewritten to match: the record, bound to the receipt, names the original.
      for (const tampered of [backdoor, { ...backdoor, sourceHash: undefined }, { ...v, sources: {} }]) {
        await redisClient.hSet('pc:dec:v', field, JSON.stringify(tampered));
        const r = await cli(['decision', 'replay', c.receiptId], env);
        expect(r.code, r.stdout).to.equal(1);
        expect(r.stdout).to.match(/FAIL policy sources: the (Rego served|version history serves no Rego)/);
        expect(r.stdout).to.include('FAIL opa eval: not run');
      }
      await redisClient.hSet('pc:dec:v', field, orig);
      expect((await cli(['decision', 'replay', c.receiptId], env)).code).to.equal(0);
      const noOpa = await cli(['decision', 'replay', c.receiptId], { ...env, PORTCULLIS_OPA: '/nonexistent/opa' });
      expect(noOpa.code).to.equal(2);
      expect(noOpa.stderr).to.include('PORTCULLIS_OPA').and.include('/nonexistent/opa');
    } finally {
      await redisClient.close();
    }
  });
});
