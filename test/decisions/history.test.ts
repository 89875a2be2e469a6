/**
 * Every version kept: GET /v1/secure/history/{document}/{ref} serves the content of each version a runtime
 * went live with — the policy's wasm and Rego, its `data` document, the rules and catalog files — by hash
 * and by version string, before and after a reload, each hashing to what it is served under.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeFacts } from '../../src/decisions/versions.js';
import { editFile, REPO, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function get(gw: TestGateway, path: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${gw.apiUrl}${path}`);
  return { status: res.status, body: await res.json(), headers: res.headers };
}

describe('version history with content: GET /v1/secure/history', function () {
  this.timeout(60_000);

  it('serves every version a receipt may name, by hash and by version, across a rules reload', async () => {
    const gw = await startTestGateway();
    try {
      const policy = gw.holder.current.policy;
      const byHash = await get(gw, `/v1/secure/history/policy/${policy.sha256}`);
      expect(byHash.status).to.equal(200);
      expect(byHash.body).to.include({ object: 'version', document: 'policy', version: policy.version, sha256: policy.sha256, encoding: 'base64' });
      expect(sha256(Buffer.from(byHash.body.content, 'base64'))).to.equal(policy.sha256);
      expect(byHash.body.sources['policies/admission/admission.rego']).to.equal(readFileSync(join(REPO, 'policies/admission/admission.rego'), 'utf8'));
      expect((await get(gw, `/v1/secure/history/policy/${policy.version}`)).body.sha256).to.equal(policy.sha256);

      const before = gw.holder.current.bundle.rungs;
      editFile(gw.root, 'rules/rungs.yaml', (t) =>
        t.replace(/^version: .*$/m, 'version: "2099.1.1"').replace('defaultTask: code-review', 'defaultTask: remediation'),
      );
      expect((await gw.admin('POST', '/reload')).status).to.equal(200);
      const after = gw.holder.current.bundle.rungs;
      expect(after.sha256).to.not.equal(before.sha256);

      for (const d of [before, after]) {
        const v = await get(gw, `/v1/secure/history/rungs/${d.version}`);
        expect(v.status).to.equal(200);
        expect(v.body).to.include({ document: 'rungs', version: d.version, sha256: d.sha256, file: 'rules/rungs.yaml', encoding: 'utf8' });
        expect(sha256(v.body.content)).to.equal(d.sha256);
      }
      expect((await get(gw, `/v1/secure/history/rungs/${after.sha256}`)).body.content).to.include('defaultTask: remediation');
      const list = await get(gw, '/v1/secure/history');
      expect(list.body.data.filter((h: any) => h.document === 'rungs').map((h: any) => h.sha256)).to.include.members([before.sha256, after.sha256]);

      // The policy's `data` document, by the hash a decision record names.
      const dataSha = runtimeFacts(gw.holder.current).dataSha256;
      const data = (await get(gw, `/v1/secure/history/policy-data/${dataSha}`)).body;
      expect(sha256(data.content)).to.equal(dataSha);
      expect(JSON.parse(data.content).rules.rungs).to.have.property('card');

      const missing = await get(gw, `/v1/secure/history/rungs/${'0'.repeat(64)}`);
      expect(missing.status).to.equal(404);
      expect(missing.body.error.code).to.equal('version-not-found');
    } finally {
      await gw.close();
    }
  });

  it('never serves as immutable an answer that may change: an edit that keeps the version string', async () => {
    const gw = await startTestGateway();
    try {
      const before = gw.holder.current.bundle.guardrails;
      const first = await get(gw, `/v1/secure/history/guardrails/${before.version}`);
      expect(first.body.sha256).to.equal(before.sha256);
      editFile(gw.root, 'rules/guardrails.yaml', (t) => `${t}# an edit that did not bump version:\n`);
      expect((await gw.admin('POST', '/reload')).status).to.equal(200);
      const after = gw.holder.current.bundle.guardrails;
      expect(after.version).to.equal(before.version);
      const second = await get(gw, `/v1/secure/history/guardrails/${before.version}`);
      expect(second.body.sha256).to.equal(after.sha256).and.not.equal(before.sha256);
      // By version: the answer changed, so neither was cacheable for good; each names its by-hash answer.
      for (const [r, sha] of [
        [first, before.sha256],
        [second, after.sha256],
      ] as const) {
        expect(r.headers.get('cache-control')).to.equal('no-cache');
        expect(r.headers.get('content-location')).to.equal(`/v1/secure/history/guardrails/${sha}`);
      }
      // By hash: each content stays what it was, immutable.
      for (const sha of [before.sha256, after.sha256]) {
        const r = await get(gw, `/v1/secure/history/guardrails/${sha}`);
        expect(r.body.sha256).to.equal(sha);
        expect(r.headers.get('cache-control')).to.include('immutable');
      }
    } finally {
      await gw.close();
    }
  });
});
