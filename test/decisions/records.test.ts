/**
 * Decision records through the public routes: every admission decision leaves one record (OPA's decision
 * log fields), its receipt names it by id and by the SHA-256 of its canonical form — so the receipt's leaf in
 * the log commits to it — the record holds the input the policy saw but never the prompt (only the guard's
 * findings and the request's sizes), and the receipt still proves against the log. Each is serialised once:
 * the record's route answers the very bytes its SHA-256 is of, and a receipt's answer starts with the bytes
 * its leaf hashes.
 */
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { TestGateway } from '../helpers/gateway.js';
import { startWorld, type World } from '../helpers/world.js';
import { commandsDuring } from '../helpers/redis-monitor.js';
import { body, smallLimitsRoot } from '../helpers/billing.js';
import { provenReceipt } from '../helpers/receipts.js';
import { secretSamples } from '../guard/helpers/secrets.js';
import { recordSha256, type DecisionRecord } from '../../src/decisions/record.js';
import { publicKeyFromPem } from '../../src/receipts/key.js';
import { canonicalReceipt } from '../../src/receipts/canonical.js';
import { verifyReceiptBundle } from '../../src/receipts/verify.js';
import { startDecisionGateway, type DecisionGateway } from './helpers.js';

const AWS = secretSamples().find((s) => s.name === 'aws AKIA')!.value;

describe('decision records bound to receipts (real redis and upstream)', function () {
  this.timeout(60_000);
  let d: DecisionGateway;
  let gw: TestGateway;
  before(async () => {
    d = await startDecisionGateway({ redis: true });
    gw = d.gw;
  });
  after(() => d?.stop());

  it('records each decision, and the receipt commits to the record by id and SHA-256', async () => {
    const p = await gw.principal();
    const prompt = `please review this config, it has ${AWS} inside, codeword zebra-quartz`;
    const plain = await gw.chat(p.token, body());
    const secret = await gw.chat(p.token, { ...body(), messages: [{ role: 'user', content: prompt }] });
    expect(plain.status).to.equal(200);
    expect(secret.status).to.equal(200);
    const key = publicKeyFromPem(((await (await fetch(`${gw.apiUrl}/v1/secure`)).json()) as any).receiptLog.publicKeyPem);

    for (const [res, findings] of [
      [plain, []],
      [secret, ['secret-hygiene']],
    ] as const) {
      const receipt = await provenReceipt(gw.apiUrl, p.token, res.body.receiptId);
      const ref = receipt['decision'].record as { id: string; sha256: string };
      expect(ref.id).to.equal(`dec_${receipt['callId']}`);
      const got = await gw.admin('GET', `/decisions/${ref.id}`);
      expect(got.status).to.equal(200);
      const record = got.body as DecisionRecord;
      expect(recordSha256(record)).to.equal(ref.sha256);
      expect(record).to.include({ decision_id: ref.id, path: 'admission/decision', call_id: receipt['callId'] });
      expect(record.bundles.admission.revision).to.equal(gw.holder.current.policy.sha256);
      expect(record.labels['kind']).to.equal('live');
      expect(record.erased).to.deep.equal(['/input/messages']);
      expect(record.input).to.deep.include({ model: 'shared-general-a', findings });
      expect(record.input.principal!.id).to.equal(p.id);
      expect(record.result.allow).to.equal(receipt['decision'].allow);
      expect(record.versions).to.deep.equal(receipt['decision'].versions);
      expect(record.sizes.messages).to.equal(1);
      expect(record.documents['policy']).to.equal(gw.holder.current.policy.sha256);
      // The receipt, record and all, proves against the signed checkpoint.
      expect(verifyReceiptBundle(receipt, key).ok).to.equal(true);
    }
    // Serialised once: the bytes answered are the bytes hashed. The record's route answers its canonical
    // form itself, and a receipt is answered as its canonical form with the proof members after it.
    const answered = await gw.chat(p.token, body());
    const receipt = await provenReceipt(gw.apiUrl, p.token, answered.body.receiptId);
    const ref = receipt['decision'].record as { id: string; sha256: string };
    const recordBytes = await (await fetch(`${gw.adminUrl}/admin/decisions/${ref.id}`, { headers: { authorization: `Bearer ${gw.adminToken}` } })).text();
    expect(createHash('sha256').update(recordBytes).digest('hex')).to.equal(ref.sha256);
    const receiptBytes = await (await fetch(`${gw.apiUrl}/v1/receipts/${receipt['id']}`, { headers: { authorization: `Bearer ${p.token}` } })).text();
    const hashed = canonicalReceipt(receipt).toString('utf8');
    expect(receiptBytes.startsWith(`${hashed.slice(0, -1)},"logIndex":${receipt['logIndex']},`)).to.equal(true, receiptBytes);

    const secretRecord = (await gw.admin('GET', `/decisions/dec_${(await provenReceipt(gw.apiUrl, p.token, secret.body.receiptId))['callId']}`)).body;
    expect(secretRecord.result.guardrails.redact).to.deep.equal(['secret-hygiene']);
    expect(secretRecord.sizes.inputChars).to.equal(prompt.length);
    // Never the prompt: neither the secret nor any word of the message.
    expect(JSON.stringify(secretRecord)).to.not.include(AWS).and.not.include('zebra-quartz');
  });

  it('records a refused decision too, and lists the records of a period', async () => {
    const p = await gw.principal();
    const refused = await gw.chat(p.token, body('red-whitehacker-a'));
    expect(refused.status).to.equal(403);
    const receipts = (await gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts`)).body.data as Array<Record<string, any>>;
    const r = receipts.find((x) => x['outcome'] === 'refused')!;
    const record = (await gw.admin('GET', `/decisions/${r['decision'].record.id}`)).body as DecisionRecord;
    expect(recordSha256(record)).to.equal(r['decision'].record.sha256);
    expect(record.result.allow).to.equal(false);
    expect(record.result.denials.map((d) => d.code)).to.deep.equal(r['decision'].codes);

    const listed = await gw.admin('GET', '/decisions?since=1h');
    expect(listed.status).to.equal(200);
    expect((listed.body.data as DecisionRecord[]).map((x) => x.decision_id)).to.include(record.decision_id);
    expect((await gw.admin('GET', '/decisions/dec_nothing')).body.error.code).to.equal('decision-not-found');
    expect((await gw.admin('GET', '/decisions?since=yesterday')).status).to.equal(400);
  });
});

describe('decision records ride in the reservation on one primary (real redis and upstream)', function () {
  this.timeout(60_000);
  let w: World;
  before(async () => {
    // One free call a day, no credits: the second call is refused by the meter.
    w = await startWorld({ root: smallLimitsRoot(1) });
  });
  after(() => w.stop());

  it("writes an admitted call's record, and that of a call the meter refuses, in the reservation's own command", async () => {
    // Another principal's call first, so the server knows the scripts (no NOSCRIPT resend in what is counted).
    expect((await w.gw.chat((await w.gw.principal()).token, body())).status).to.equal(200);
    const p = await w.gw.principal();
    for (const expected of [200, 429]) {
      let res: Awaited<ReturnType<typeof w.gw.chat>> | undefined;
      const sent = await commandsDuring(w.redis.url, async () => (res = await w.gw.chat(p.token, body())));
      expect(res!.status).to.equal(expected);
      const receipts = (await w.gw.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts`)).body.data as Array<Record<string, any>>;
      const receipt = receipts.find((r) => r['callId'] && sent.some((l) => l.includes(`hold:${r['callId']}`)))!;
      const ref = receipt['decision'].record as { id: string; sha256: string };
      // The record is stored and is the one the receipt commits to...
      const record = (await w.gw.admin('GET', `/decisions/${ref.id}`)).body as DecisionRecord;
      expect(recordSha256(record)).to.equal(ref.sha256);
      // ...written by the one command that also holds the call's reservation: no command of its own.
      const naming = sent.filter((l) => l.includes(`dec:r:${ref.id}"`));
      expect(naming).to.have.length(1);
      expect(naming[0]).to.include(`hold:${receipt['callId']}"`);
    }
  });
});
