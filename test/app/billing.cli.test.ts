/**
 * Billing as an operator runs it from the shell: credit grants and plans (idempotent on an operation id),
 * the day's receipts, the receipt key, `portcullis receipt verify` checking a receipt and its inclusion proof
 * offline — with the key given, from PORTCULLIS_RECEIPT_KEY, or from `receipts.keyFile` in
 * config/gateway.yaml; a receipt from before the log; and `portcullis receipt audit` between two checkpoints.
 */
import { expect } from 'chai';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { body } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { provenReceipt } from '../helpers/receipts.js';

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
    expect(again.stdout).to.equal(
      `already granted (nothing changed): 5000000 micro-USD of credits to ${p.id}, operation evt_123; available 5000000 micro-USD\n`,
    );
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
    expect(JSON.parse(lines[0]!).id).to.equal(res.body.receiptId);

    const shown = await cli(['admin', 'receipt-key'], env);
    expect(shown.stdout).to.equal(publicPem);
    const pub = join(dir, 'pub.pem');
    writeFileSync(pub, shown.stdout);
    // What a principal saves: its receipt as GET /v1/receipts/{id} answers once a checkpoint covers it.
    const receipt = await provenReceipt(gw.apiUrl, p.token, res.body.receiptId);
    const file = join(dir, 'receipt.json');
    writeFileSync(file, JSON.stringify(receipt, null, 2));

    const withKey = await cli(['receipt', 'verify', file, '--key', pub]);
    expect(withKey.code, withKey.stderr).to.equal(0);
    expect(withKey.stdout).to.match(
      /^valid: receipt rcpt_\S+ is leaf \d+ of log portcullis\.localhost\/receipts, in its signed checkpoint of size \d+ \(root \S+\)\n$/,
    );
    const fromEnv = await cli(['receipt', 'verify', file], { PORTCULLIS_RECEIPT_KEY: privatePem });
    expect(fromEnv.code, fromEnv.stderr).to.equal(0);
    const fromConfig = await cli(['receipt', 'verify', file, '--root', gw.root], { PORTCULLIS_RECEIPT_KEY: '' });
    expect(fromConfig.code, fromConfig.stderr).to.equal(0);
    // The checkpoint given apart (as fetched from the log's public route) is used instead of the file's.
    const cpFile = join(dir, 'checkpoint.txt');
    writeFileSync(cpFile, receipt['checkpoint']);
    expect((await cli(['receipt', 'verify', file, '--key', pub, '--checkpoint', cpFile])).code).to.equal(0);

    const refused = async (changed: Record<string, unknown>, extra: string[] = []) => {
      const f = join(dir, 'tampered.json');
      writeFileSync(f, JSON.stringify(changed));
      const r = await cli(['receipt', 'verify', f, '--key', pub, ...extra]);
      expect(r.code, r.stdout).to.equal(1);
      expect(r.stderr).to.contain('NOT valid');
      return r.stderr;
    };
    // A changed receipt, a changed proof, a changed checkpoint, a changed signature, another key.
    expect(await refused({ ...receipt, chargedMicroUSD: 1 })).to.contain('the receipt or its proof was changed');
    const proof = receipt['inclusionProof'] as string[];
    if (proof.length > 0)
      expect(await refused({ ...receipt, inclusionProof: [Buffer.alloc(32, 7).toString('base64'), ...proof.slice(1)] })).to.contain('proof');
    const cp = receipt['checkpoint'] as string;
    const [origin, size] = cp.split('\n');
    expect(await refused({ ...receipt, checkpoint: cp.replace(`${origin}\n${size}\n`, `${origin}\n${Number(size) + 1}\n`) })).to.contain(
      'signature does not match',
    );
    const sig = /— \S+ (\S+)\n$/.exec(cp)![1]!;
    const bent = Buffer.from(sig, 'base64');
    bent[20]! ^= 1;
    expect(await refused({ ...receipt, checkpoint: cp.replace(sig, bent.toString('base64')) })).to.contain('signature does not match');
    const otherPub = join(dir, 'other.pem');
    writeFileSync(otherPub, generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const other = await cli(['receipt', 'verify', file, '--key', otherPub]);
    expect(other.code).to.equal(1);
    expect(other.stderr).to.contain('no signature by the key');
    // A receipt not yet covered by a checkpoint says so.
    expect(await refused({ ...receipt, pending: true, inclusionProof: undefined, checkpoint: undefined })).to.contain('pending');
  });

  it('refuses JSON that names a key twice: a receipt showing one charge and checked with another, a proof file', async () => {
    const p = await gw.principal();
    const pub = join(dir, 'dup-pub.pem');
    writeFileSync(pub, publicPem);
    const receipt = await provenReceipt(gw.apiUrl, p.token, (await gw.chat(p.token, body())).body.receiptId);
    const text = JSON.stringify(receipt);
    const file = join(dir, 'dup.json');
    writeFileSync(file, text);
    expect((await cli(['receipt', 'verify', file, '--key', pub])).code).to.equal(0);
    // A reader sees the first chargedMicroUSD; JSON.parse keeps the last, the real one, which verifies.
    writeFileSync(file, `{"chargedMicroUSD":1,${text.slice(1)}`);
    const dup = await cli(['receipt', 'verify', file, '--key', pub]);
    expect(dup.code, dup.stdout).to.equal(1);
    expect(dup.stderr).to.contain('NOT valid').and.contain('"chargedMicroUSD" twice');
    // Written with an escape, the key is the same key.
    writeFileSync(file, `{"\\u0063hargedMicroUSD":1,${text.slice(1)}`);
    expect((await cli(['receipt', 'verify', file, '--key', pub])).stderr).to.contain('"chargedMicroUSD" twice');
    // An audit's proof file too.
    const cp = join(dir, 'dup-cp.txt');
    writeFileSync(cp, receipt['checkpoint']);
    const proofFile = join(dir, 'dup-proof.json');
    writeFileSync(proofFile, '{"proof":["AAAA"],"proof":[]}');
    const audit = await cli(['receipt', 'audit', '--from', cp, '--to', cp, '--key', pub, '--proof', proofFile]);
    expect(audit.code).to.equal(1);
    expect(audit.stderr).to.contain('"proof" twice');
  });

  it('still verifies a receipt signed on its own before the log (the previous format)', async () => {
    const legacy: Record<string, unknown> = { id: 'rcpt_old', principalId: 'did:web:x:tenant:a', createdAt: '2026-01-01T00:00:00.000Z', chargedMicroUSD: 54 };
    const keyId = createHash('sha256')
      .update(key.publicKey.export({ type: 'spki', format: 'der' }))
      .digest('hex')
      .slice(0, 16);
    const value = sign(null, Buffer.from(canonicalize(legacy)!, 'utf8'), key.privateKey).toString('base64url');
    const file = join(dir, 'legacy.json');
    writeFileSync(file, JSON.stringify({ ...legacy, signature: { alg: 'Ed25519', keyId, value } }));
    const ok = await cli(['receipt', 'verify', file], { PORTCULLIS_RECEIPT_KEY: privatePem });
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).to.equal(`valid: receipt rcpt_old (from before the log) is signed by key ${keyId}\n`);
    writeFileSync(file, JSON.stringify({ ...legacy, chargedMicroUSD: 0, signature: { alg: 'Ed25519', keyId, value } }));
    const bad = await cli(['receipt', 'verify', file], { PORTCULLIS_RECEIPT_KEY: privatePem });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('the signature does not match the receipt');
  });

  it('audits that the log only grew between two saved checkpoints, and refuses a forged proof or checkpoint', async () => {
    const p = await gw.principal();
    const pub = join(dir, 'audit-pub.pem');
    writeFileSync(pub, publicPem);
    const first = await provenReceipt(gw.apiUrl, p.token, (await gw.chat(p.token, body())).body.receiptId);
    const older = join(dir, 'older.txt');
    writeFileSync(older, first['checkpoint']);
    for (let i = 0; i < 3; i += 1) expect((await gw.chat(p.token, body())).status).to.equal(200);
    const last = await provenReceipt(gw.apiUrl, p.token, (await gw.chat(p.token, body())).body.receiptId);
    const newer = join(dir, 'newer.txt');
    const audit = await cli(['receipt', 'audit', '--from', older, '--to', 'latest', '--key', pub, '--url', gw.apiUrl, '--save', newer]);
    expect(audit.code, audit.stderr).to.equal(0);
    expect(audit.stdout).to.match(
      /^consistent: log portcullis\.localhost\/receipts at size \d+ \(root \S+\) extends its checkpoint of size \d+ \(root \S+\)\n$/,
    );
    const sizeOf = (note: string) => Number(note.split('\n')[1]);
    expect(sizeOf(readFileSync(newer, 'utf8'))).to.be.at.least(sizeOf(last['checkpoint']));
    // Between two saved files, the proof fetched from the API; then offline, from a saved proof.
    expect((await cli(['receipt', 'audit', '--from', older, '--to', newer, '--key', pub, '--url', gw.apiUrl])).code).to.equal(0);
    const res = await fetch(`${gw.apiUrl}/v1/receipts/log/consistency?from=${sizeOf(first['checkpoint'])}&to=${sizeOf(readFileSync(newer, 'utf8'))}`);
    const proofBody = (await res.json()) as { proof: string[] };
    const proofFile = join(dir, 'proof.json');
    writeFileSync(proofFile, JSON.stringify(proofBody));
    expect((await cli(['receipt', 'audit', '--from', older, '--to', newer, '--key', pub, '--proof', proofFile])).code).to.equal(0);
    // A forged proof, and a checkpoint whose root was changed, are refused.
    writeFileSync(proofFile, JSON.stringify({ proof: proofBody.proof.map(() => Buffer.alloc(32, 1).toString('base64')) }));
    const forged = await cli(['receipt', 'audit', '--from', older, '--to', newer, '--key', pub, '--proof', proofFile]);
    expect(forged.code).to.equal(1);
    expect(forged.stderr).to.contain('NOT valid');
    const note = readFileSync(newer, 'utf8').split('\n');
    note[2] = Buffer.alloc(32, 9).toString('base64');
    writeFileSync(newer, note.join('\n'));
    const changed = await cli(['receipt', 'audit', '--from', older, '--to', newer, '--key', pub, '--url', gw.apiUrl]);
    expect(changed.code).to.equal(1);
    expect(changed.stderr).to.contain('the newer checkpoint').and.contain('signature does not match');
  });

  it('check refuses an unknown key under receipts (the schema stays strict)', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) => `${t}\nreceipts:\n  keyPath: x.pem\n`);
    const r = await cli(['check', '--root', root]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('config/gateway.yaml').and.contain('receipts');
  });
});
