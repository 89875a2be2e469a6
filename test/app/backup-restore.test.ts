/**
 * Backup and restore, as docs/operators.md tells an operator to do it: while paid calls run, the append-only
 * files of the money Redis are copied (auto-rewrite paused, as Redis' own backup advice says), and the copy is
 * restored into a fresh redis-server with a gateway started on it holding the same receipt key and data key.
 * Everything a client was answered before the copy began is there: its receipt and log leaf, the principal's
 * token and browser session, a TOTP enrolment that still checks codes; every balance is whole (available =
 * granted - spent - reserved, and once orphaned reservations expire, spent = the receipts' charges); and
 * `portcullis receipt audit` finds the restored log consistent with a checkpoint published before the copy.
 */
import { expect } from 'chai';
import { cpSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { startWorld, type World } from '../helpers/world.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson } from '../helpers/passkey.js';
import { body, smallLimitsRoot } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { codeAt } from '../../src/totp/codes.js';
import { until } from '../helpers/wait.js';

const ORIGINS = {
  PORTCULLIS_AUTH_URL: 'http://localhost:28081',
  PORTCULLIS_CONSOLE_URL: 'http://localhost:28082',
  PORTCULLIS_API_URL: 'http://localhost:28080',
};

describe('backup and restore of the money Redis', function () {
  this.timeout(120_000);
  let w: World;
  let restored: RedisServer;
  let gw2: TestGateway;
  let now = Date.parse('2030-05-02T09:00:00.000Z');
  const clock = () => now;
  const receiptKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const work = mkdtempSync(join(tmpdir(), 'portcullis-backup-'));

  before(async () => {
    w = await startWorld({ root: smallLimitsRoot(0), now: clock, env: { ...ORIGINS, PORTCULLIS_RECEIPT_KEY: receiptKey } });
    await w.upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
  });
  after(async () => {
    await gw2?.close();
    await restored?.stop();
    await w.stop();
  });

  it('restores balances, tokens, sessions, TOTP and a log consistent with checkpoints published before the copy', async () => {
    const p = await w.gw.principal();
    const granted = 50_000_000;
    expect((await w.gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: granted, operationId: 'backup-grant' })).status).to.equal(
      201,
    );
    const person = new Browser(w.gw);
    const { a, principalId: personId } = await newPerson(person);
    const { secret } = (await person.post('auth', '/v1/totp/enrol')).body;
    expect((await person.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(secret, now) })).status).to.equal(200);

    // Paid calls in flight the whole time the copy is taken.
    const answered: Array<{ id: string; at: number }> = [];
    let running = true;
    let calls = 0;
    const worker = async () => {
      while (running) {
        const r = await w.gw.chat(p.token, body());
        calls++;
        if (r.status === 200) answered.push({ id: r.body.receiptId as string, at: Date.now() });
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await until(() => answered.length >= 10, { what: 'ten paid calls answered', everyMs: 5 });

    // A checkpoint a reviewer kept, published before the copy.
    const signed = async () => (await fetch(`${w.gw.apiUrl}/v1/receipts/log/checkpoint`)).text();
    await until(async () => /\n[1-9]\d*\n/.test(await signed()), { what: 'a signed checkpoint over some leaves' });
    const checkpoint = join(work, 'before.txt');
    writeFileSync(checkpoint, await signed());

    // The copy: pause AOF rewrites so the file set cannot change under us, copy appendonlydir, resume.
    const admin = createClient({ url: w.redis.url });
    await admin.connect();
    await admin.configSet('auto-aof-rewrite-percentage', '0');
    await until(async () => !(await admin.info('persistence')).includes('aof_rewrite_in_progress:1'), { what: 'a running AOF rewrite to end' });
    const copiedFrom = Date.now();
    const mustHave = answered.filter((a) => a.at < copiedFrom).map((a) => a.id);
    const backup = join(work, 'appendonlydir');
    cpSync(join(w.redis.dir, 'appendonlydir'), backup, { recursive: true });
    await admin.configSet('auto-aof-rewrite-percentage', '100');
    await admin.close();
    const moreAfter = answered.length;
    while (answered.length < moreAfter + 5) await new Promise((r) => setImmediate(r));
    running = false;
    await Promise.all(workers);
    expect(calls).to.be.greaterThan(mustHave.length);

    // Restore into a fresh redis-server: its files replaced by the copy before it starts again.
    restored = await startRedisServer();
    await restored.kill('SIGTERM');
    cpSync(backup, join(restored.dir, 'appendonlydir'), { recursive: true });
    expect(readdirSync(join(restored.dir, 'appendonlydir')).some((f) => f.endsWith('.manifest'))).to.equal(true);
    await restored.restart();
    gw2 = await startTestGateway({
      root: w.gw.root,
      upstreamUrl: w.upstream.baseUrl,
      redisUrl: restored.url,
      now: clock,
      env: { ...ORIGINS, PORTCULLIS_RECEIPT_KEY: receiptKey },
    });

    // Every receipt answered before the copy began is there.
    for (const id of mustHave) expect((await gw2.admin('GET', `/receipts/${id}`)).status, id).to.equal(200);
    // The token, the browser session and the TOTP enrolment still work.
    expect((await gw2.chat(p.token, body())).status).to.equal(200);
    const again = new Browser(gw2);
    again.cookie = person.cookie;
    expect((await again.get('api', '/v1/session')).body).to.deep.include({ valid: true, principalId: personId });
    now += 30_000; // the next TOTP step: the enrolling code's step was used
    const fresh = new Browser(gw2);
    expect((await login(fresh, a)).verify.body.secondFactor).to.equal('totp');
    expect((await fresh.post('auth', '/v1/totp/verify', { code: codeAt(secret, now) })).status).to.equal(200);

    // Balances whole; once the reservations the copy caught in flight expire, spent = what the receipts charged.
    const balance = async () => (await gw2.admin('GET', `/principals/${encodeURIComponent(p.id)}/billing`)).body.balances[0] as Record<string, number>;
    const b = await balance();
    expect(b['availableMicroUSD']).to.equal(b['grantedMicroUSD']! - b['spentMicroUSD']! - b['reservedMicroUSD']!);
    expect(b['grantedMicroUSD']).to.equal(granted);
    now += 2 * 3_600_000;
    const settled = await balance();
    expect(settled['reservedMicroUSD']).to.equal(0);
    const receipts = (await gw2.admin('GET', `/principals/${encodeURIComponent(p.id)}/receipts?day=2030-05-02`)).body.data as Array<Record<string, number>>;
    expect(settled['spentMicroUSD']).to.equal(receipts.reduce((n, r) => n + r['chargedMicroUSD']!, 0));

    // The restored log extends the checkpoint published before the copy.
    const keyFile = join(work, 'receipt-key.pem');
    writeFileSync(keyFile, receiptKey);
    const audit = await cli(['receipt', 'audit', '--from', checkpoint, '--to', 'latest', '--key', keyFile, '--url', gw2.apiUrl]);
    expect(audit.code, audit.stderr + audit.stdout).to.equal(0);
    expect(audit.stdout).to.match(/^consistent: /m);
  });
});
