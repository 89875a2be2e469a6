/**
 * GET /v1/secure as a compliance reviewer uses it: public, on the API listener; the guardrail, firewall and
 * compliance documents and the rung table straight from the loaded YAML, with versions and file hashes; the
 * policy version; the receipt log's name and checkpoint key; a strong ETag that answers If-None-Match with 304; and
 * the version history, recorded in the store when a runtime goes live (start, reload) and shared by every
 * gateway on that store. A receipt names the same versions the body does.
 */
import { expect } from 'chai';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { startWorld, type World } from '../helpers/world.js';
import { editFile, startTestGateway } from '../helpers/gateway.js';
import { openCheckpoint, parseVerifierKey } from '../../src/receipts/note.js';

const sha256 = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('GET /v1/secure', () => {
  let w: World;
  let started: number;
  // One configured receipt key for every gateway of the fleet, as the README asks.
  const env = { PORTCULLIS_RECEIPT_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };

  before(async () => {
    started = Date.now();
    w = await startWorld({ env });
  });
  after(() => w.stop());

  const get = async (headers: Record<string, string> = {}) => {
    const res = await fetch(`${w.gw.apiUrl}/v1/secure`, { headers });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : null, headers: res.headers };
  };
  const file = (rel: string) => readFileSync(join(w.gw.root, rel), 'utf8');

  it('is public and serves the guardrails, firewall and compliance documents with their versions and file hashes', async () => {
    const res = await get();
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('application/json');
    const b = res.body;
    for (const [name, rel] of [
      ['guardrails', 'rules/guardrails.yaml'],
      ['firewall', 'rules/firewall.yaml'],
      ['compliance', 'rules/compliance.yaml'],
    ] as const) {
      const yaml = parse(file(rel)) as Record<string, unknown>;
      const { version, ...rest } = yaml;
      expect(b[name], name).to.deep.equal({ version, sha256: sha256(file(rel)), file: rel, ...rest });
      expect(b.versions[name]).to.equal(version);
    }
    // The rules of the spec's table, in order, with their actions.
    expect(b.guardrails.rules.map((r: { id: string; action: string }) => [r.id, r.action])).to.deep.equal([
      ['csam-block', 'block'],
      ['cbrn-block', 'block'],
      ['fraud-block', 'block'],
      ['secret-hygiene', 'redact'],
      ['pii-passkeys', 'flag'],
    ]);
  });

  it('serves the rung table of the spec from rules/rungs.yaml, and the policy version', async () => {
    const b = (await get()).body;
    expect(b.rungs.version).to.equal(w.gw.holder.current.versions.rules);
    expect(b.rungs.sha256).to.equal(sha256(file('rules/rungs.yaml')));
    expect(b.rungs.table.map((r: Record<string, unknown>) => [r['rung'], r['level'], r['tokensPerDay'], r['ceilingPerDay'], r['band']])).to.deep.equal([
      ['card', 'L1', 102400, 102400, 'code-review'],
      ['identity', 'L2', 102400, 200000, 'code-review'],
      ['business', 'L3', 2000000, 8000000, 'cyber'],
      ['contracted', 'L4', 8000000, 32000000, 'offensive'],
    ]);
    expect(b.rungs.table[0].evidence).to.equal('live credit or debit card (prepaid rejected), verified with a zero-amount check');
    const wasm = readFileSync(new URL('../../policies/build/admission.wasm', import.meta.url));
    expect(b.policy).to.deep.include({ version: sha256(wasm).slice(0, 12), sha256: sha256(wasm) });
    expect(b.versions.policy).to.equal(b.policy.version);
  });

  it('publishes the receipt log: its name and the key its checkpoints are signed with, which opens the served checkpoint', async () => {
    const b = (await get()).body;
    const key = (await w.gw.admin('GET', '/receipt-key')).body;
    expect(b.receiptLog).to.include({
      name: 'portcullis.localhost/receipts',
      alg: 'Ed25519',
      keyId: key.keyId,
      publicKeyPem: key.publicKeyPem,
      checkpointEveryMs: 1000,
    });
    expect(b.receiptLog).not.to.have.property('ephemeral');
    expect(b).not.to.have.property('receiptKey');
    const { name, publicKey } = parseVerifierKey(b.receiptLog.verifierKey);
    expect(name).to.equal(b.receiptLog.name);
    const res = await fetch(`${w.gw.apiUrl}/v1/receipts/log/checkpoint`);
    expect(res.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    const opened = openCheckpoint(await res.text(), publicKey, name);
    expect(opened.ok).to.equal(true);
  });

  it('names the versions a receipt names', async () => {
    const p = await w.gw.principal();
    const res = await w.gw.chat(p.token, { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'hello' }] });
    const receipt = (await w.gw.admin('GET', `/receipts/${res.body.receiptId}`)).body;
    const b = (await get()).body;
    expect(receipt.decision.versions).to.deep.equal(b.versions);
    expect(receipt.decision.versions).to.include.keys('guardrails', 'firewall', 'compliance', 'policy', 'rules');
  });

  it('carries a strong ETag of the body and answers If-None-Match with 304', async () => {
    const first = await get();
    const etag = first.headers.get('etag')!;
    expect(etag).to.equal(`"${createHash('sha256').update(first.text).digest('base64url')}"`);
    expect(first.headers.get('cache-control')).to.equal('no-cache');
    const again = await get();
    expect(again.headers.get('etag')).to.equal(etag);

    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await get({ 'if-none-match': header });
      expect(cached.status, header).to.equal(304);
      expect(cached.text).to.equal('');
      expect(cached.headers.get('etag')).to.equal(etag);
    }
    expect((await get({ 'if-none-match': '"something-else"' })).status).to.equal(200);
  });

  it('serves the version history: every document went live at start; a reload with a new document adds it, dated', async () => {
    const start = (await get()).body.history as Array<Record<string, any>>;
    expect(start.map((h) => h.document)).to.deep.equal(['catalog', 'compliance', 'firewall', 'guardrails', 'policy', 'rungs']);
    for (const h of start) {
      expect(h.live).to.equal(true);
      expect(Date.parse(h.liveSince)).to.be.within(started - 1000, Date.now());
    }
    const guardrails0 = start.find((h) => h.document === 'guardrails')!;
    expect(guardrails0).to.include({ version: w.gw.holder.current.versions.guardrails, sha256: sha256(file('rules/guardrails.yaml')) });
    const etag0 = (await get()).headers.get('etag')!;

    const beforeReload = new Date().toISOString();
    editFile(w.gw.root, 'rules/guardrails.yaml', (t) => t.replace(/^version: ".*"$/m, 'version: "2099.1.1"'));
    expect((await w.gw.admin('POST', '/reload')).status).to.equal(200);

    const res = await get({ 'if-none-match': etag0 });
    expect(res.status, 'the body changed, so the old ETag no longer matches').to.equal(200);
    const history = res.body.history as Array<Record<string, any>>;
    const guardrails = history.filter((h) => h.document === 'guardrails');
    expect(guardrails).to.have.length(2);
    expect(guardrails[0]).to.deep.equal({ ...guardrails0, live: false });
    expect(guardrails[1]).to.include({ version: '2099.1.1', sha256: sha256(file('rules/guardrails.yaml')), live: true });
    expect(guardrails[1]!.liveSince >= beforeReload).to.equal(true);
    expect(res.body.guardrails.version).to.equal('2099.1.1');
    expect(res.body.versions.guardrails).to.equal('2099.1.1');
    // Unchanged documents keep their one entry and its date.
    expect(history.filter((h) => h.document === 'firewall')).to.deep.equal(start.filter((h) => h.document === 'firewall'));
  });

  it('shares the history across gateways on one store: a second gateway adds nothing, and serves the same body and ETag', async () => {
    const before = (await get()).body.history;
    const second = await startTestGateway({ redisUrl: w.redis.url, root: w.gw.root, env });
    try {
      const res = await fetch(`${second.apiUrl}/v1/secure`);
      const b = (await res.json()) as { history: unknown[] };
      expect(b.history).to.deep.equal(before);
      expect(res.headers.get('etag')).to.equal((await get()).headers.get('etag'));
    } finally {
      await second.close();
    }
  });
});
