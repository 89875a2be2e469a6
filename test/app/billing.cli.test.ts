/**
 * Billing as an operator runs it from the shell: credit grants and plans (idempotent on an operation id),
 * the day's receipts, the receipt key, and `portcullis receipt verify` checking a receipt offline — with
 * the key given, from PORTCULLIS_RECEIPT_KEY, or from `receipts.keyFile` in config/gateway.yaml.
 */
import { expect } from 'chai';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';

describe('portcullis CLI: billing and receipts', function () {
  this.timeout(60_000);
  let up: RecordingUpstream;
  let gw: TestGateway;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-receipts-'));
  const key = generateKeyPairSync('ed25519');
  const privatePem = key.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const publicPem = key.publicKey.export({ type: 'spki', format: 'pem' }).toString();

  before(async () => {
    up = await startRecordingUpstream();
    // The key comes from config: receipts.keyFile, relative to the configuration root.
    const root = configRoot();
    writeFileSync(join(root, 'config', 'receipt-key.pem'), privatePem);
    editFile(root, 'config/gateway.yaml', (t) => `${t}\nreceipts:\n  keyFile: config/receipt-key.pem\n`);
    gw = await startTestGateway({ upstreamUrl: up.baseUrl, root });
    env = { PORTCULLIS_ADMIN_URL: gw.adminUrl, PORTCULLIS_ADMIN_TOKEN: gw.adminToken, PORTCULLIS_RECEIPT_KEY: '' };
  });
  after(async () => {
    await gw.close();
    await up.stop();
  });

  it('grants credits once per operation id and sets a plan', async () => {
    const p = await gw.principal();
    const first = await cli(['admin', 'credits', 'grant', p.id, '--micro-usd', '5000000', '--id', 'evt_123'], env);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stdout).to.equal(`granted: 5000000 micro-USD of credits to ${p.id}, operation evt_123; available 5000000 micro-USD\n`);
    const again = await cli(['admin', 'credits', 'grant', p.id, '--micro-usd', '5000000', '--id', 'evt_123'], env);
    expect(again.stdout).to.equal(`already granted (nothing changed): 5000000 micro-USD of credits to ${p.id}, operation evt_123; available 5000000 micro-USD\n`);
    const plan = await cli(['admin', 'plan', 'set', p.id, 'team'], env);
    expect(plan.code, plan.stderr).to.equal(0);
    expect(plan.stdout).to.contain('granted: plan team with 60000000 micro-USD of AI credits').and.contain('available 65000000 micro-USD');
    const bad = await cli(['admin', 'credits', 'grant', p.id, '--micro-usd', '1.5'], env);
    expect(bad.code).to.equal(2);
  });

  it('lists the day’s receipts and verifies one offline, with the key given, from the environment, or from config', async () => {
    const p = await gw.principal();
    const res = await gw.chat(p.token, body());
    expect(res.status).to.equal(200);
    const day = new Date().toISOString().slice(0, 10);
    const listed = await cli(['admin', 'receipts', p.id, '--day', day], env);
    expect(listed.code, listed.stderr).to.equal(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines).to.have.length(1);
    const receipt = JSON.parse(lines[0]!);
    expect(receipt.id).to.equal(res.body.receiptId);

    const shown = await cli(['admin', 'receipt-key'], env);
    expect(shown.stdout).to.equal(publicPem);
    const pub = join(dir, 'pub.pem');
    writeFileSync(pub, shown.stdout);
    const file = join(dir, 'receipt.json');
    writeFileSync(file, JSON.stringify(receipt, null, 2));

    const withKey = await cli(['receipt', 'verify', file, '--key', pub]);
    expect(withKey.code, withKey.stderr).to.equal(0);
    expect(withKey.stdout).to.match(/^valid: receipt rcpt_\S+ is signed by key [0-9a-f]{16}\n$/);
    const fromEnv = await cli(['receipt', 'verify', file], { PORTCULLIS_RECEIPT_KEY: privatePem });
    expect(fromEnv.code, fromEnv.stderr).to.equal(0);
    const fromConfig = await cli(['receipt', 'verify', file, '--root', gw.root], { PORTCULLIS_RECEIPT_KEY: '' });
    expect(fromConfig.code, fromConfig.stderr).to.equal(0);

    const tampered = join(dir, 'tampered.json');
    writeFileSync(tampered, JSON.stringify({ ...receipt, chargedMicroUSD: 1 }));
    const bad = await cli(['receipt', 'verify', tampered, '--key', pub]);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('NOT valid').and.contain('the signature does not match the receipt');
  });

  it('check refuses an unknown key under receipts (the schema stays strict)', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) => `${t}\nreceipts:\n  keyPath: x.pem\n`);
    const r = await cli(['check', '--root', root]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('config/gateway.yaml').and.contain('receipts');
  });
});
