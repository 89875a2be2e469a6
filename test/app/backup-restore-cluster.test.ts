/**
 * Backup and restore of a Redis Cluster, as docs/operators.md tells an operator to do it: while paid calls run
 * through a gateway on a real cluster (three masters, a replica each), the append-only files of every master
 * are copied (auto-rewrite paused on all of them first), and each copy is restored into the master of a fresh
 * cluster that serves the same slots; a gateway started on the fresh cluster with the same receipt key and data
 * key finds everything a client was answered before the copy began: its receipt, the token, the browser
 * session, a TOTP enrolment that still checks codes (those families live on other masters than the money); the
 * balance whole (available = granted - spent - reserved, and once orphaned reservations expire, spent = the
 * receipts' charges); and `portcullis receipt audit` finds the restored log consistent with a checkpoint
 * published before the copy.
 */
import { expect } from 'chai';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisCluster, type ClusterNode, type RedisCluster } from '../helpers/redis-cluster.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { login, newPerson } from '../helpers/passkey.js';
import { body, smallLimitsRoot } from '../helpers/billing.js';
import { cli } from '../helpers/cli.js';
import { codeAt } from '../../src/totp/codes.js';

const ORIGINS = {
  PORTCULLIS_AUTH_URL: 'http://localhost:28081',
  PORTCULLIS_CONSOLE_URL: 'http://localhost:28082',
  PORTCULLIS_API_URL: 'http://localhost:28080',
};
const enc = encodeURIComponent;

/** A master's slots as one comparable string: a restored copy belongs on the fresh master serving the same. */
const slotsOf = (n: ClusterNode) =>
  n.slots
    .map(([from, to]) => `${from}-${to}`)
    .sort()
    .join(',');

describe('backup and restore of a Redis Cluster', function () {
  this.timeout(180_000);
  let source: RedisCluster;
  let fresh: RedisCluster;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let gw2: TestGateway;
  let now = Date.parse('2030-05-03T09:00:00.000Z');
  const clock = () => now;
  const receiptKey = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const work = mkdtempSync(join(tmpdir(), 'portcullis-cluster-backup-'));

  before(async () => {
    [source, upstream] = await Promise.all([startRedisCluster({ replicas: 1 }), startRecordingUpstream()]);
    await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
    const env = { ...ORIGINS, PORTCULLIS_RECEIPT_KEY: receiptKey, REDIS_CLUSTER_NODES: source.seeds.join(',') };
    gw = await startTestGateway({ root: smallLimitsRoot(0), upstreamUrl: upstream.baseUrl, env, now: clock });
  });
  after(async () => {
    await Promise.all([gw?.close(), gw2?.close()]);
    await Promise.all([source?.stop(), fresh?.stop(), upstream?.stop()]);
    rmSync(work, { recursive: true, force: true });
  });

  it('restores every master into a fresh cluster: balances, tokens, sessions, TOTP and a log consistent with checkpoints published before the copy', async () => {
    const p = await gw.principal();
    const granted = 50_000_000;
    expect((await gw.admin('POST', `/principals/${enc(p.id)}/credits`, { microUSD: granted, operationId: 'cluster-backup-grant' })).status).to.equal(201);
    const person = new Browser(gw);
    const { a, principalId: personId } = await newPerson(person);
    const { secret } = (await person.post('auth', '/v1/totp/enrol')).body;
    expect((await person.post('auth', '/v1/totp/enrol/confirm', { code: codeAt(secret, now) })).status).to.equal(200);

    // Paid calls in flight the whole time the copies are taken.
    const answered: Array<{ id: string; at: number }> = [];
    let running = true;
    let calls = 0;
    const worker = async () => {
      while (running) {
        const r = await gw.chat(p.token, body());
        calls++;
        if (r.status === 200) answered.push({ id: r.body.receiptId as string, at: Date.now() });
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    while (answered.length < 10) await new Promise((r) => setImmediate(r));

    // A checkpoint a reviewer kept, published before the copy.
    const signed = async () => (await fetch(`${gw.apiUrl}/v1/receipts/log/checkpoint`)).text();
    while (!/\n[1-9]\d*\n/.test(await signed())) await new Promise((r) => setTimeout(r, 20));
    const checkpoint = join(work, 'before.txt');
    writeFileSync(checkpoint, await signed());

    // The copy, on every master: rewrites paused everywhere first (so no file set changes under the copy),
    // then each master's appendonlydir copied, then rewrites resumed.
    const masters = (await source.nodes()).filter((n) => n.role === 'master' && n.slots.length > 0);
    expect(masters).to.have.length(3);
    const serverOf = (port: number) => source.servers.find((s) => s.port === port)!;
    for (const m of masters) await source.cli(m.port, 'CONFIG', 'SET', 'auto-aof-rewrite-percentage', '0');
    for (const m of masters) {
      while ((await source.cli(m.port, 'INFO', 'persistence')).includes('aof_rewrite_in_progress:1')) await new Promise((r) => setTimeout(r, 20));
    }
    const copiedFrom = Date.now();
    const mustHave = answered.filter((x) => x.at < copiedFrom).map((x) => x.id);
    const backups = masters.map((m) => {
      const to = join(work, `master-${m.port}`, 'appendonlydir');
      cpSync(join(serverOf(m.port).dir, 'appendonlydir'), to, { recursive: true });
      return { slots: slotsOf(m), dir: to };
    });
    for (const m of masters) await source.cli(m.port, 'CONFIG', 'SET', 'auto-aof-rewrite-percentage', '100');
    // The deployment's state is spread over the masters: a copy of the money master alone would not do.
    const holding = (await Promise.all(masters.map(async (m) => Number((await source.cli(m.port, 'DBSIZE')).trim())))).filter((n) => n > 0);
    expect(holding.length, 'masters holding keys').to.be.at.least(2);

    const moreAfter = answered.length;
    while (answered.length < moreAfter + 5) await new Promise((r) => setImmediate(r));
    running = false;
    await Promise.all(workers);
    expect(calls).to.be.greaterThan(mustHave.length);

    // Restore into a fresh cluster: each master stopped, its files replaced by the copy of the old master that
    // served the same slots (its own nodes.conf kept), started again.
    fresh = await startRedisCluster({ replicas: 0 });
    const targets = (await fresh.nodes()).filter((n) => n.role === 'master');
    await Promise.all(
      backups.map(async (b) => {
        const target = targets.find((n) => slotsOf(n) === b.slots);
        expect(target, `a fresh master serving ${b.slots}`).to.not.equal(undefined);
        const server = fresh.servers.find((s) => s.port === target!.port)!;
        await server.kill('SIGTERM');
        rmSync(join(server.dir, 'appendonlydir'), { recursive: true, force: true });
        cpSync(b.dir, join(server.dir, 'appendonlydir'), { recursive: true });
        await server.restart();
      }),
    );
    await fresh.waitForOk();
    const env2 = { ...ORIGINS, PORTCULLIS_RECEIPT_KEY: receiptKey, REDIS_CLUSTER_NODES: fresh.seeds.join(',') };
    gw2 = await startTestGateway({ root: gw.root, upstreamUrl: upstream.baseUrl, env: env2, now: clock });

    // Every receipt answered before the copy began is there.
    for (const id of mustHave) expect((await gw2.admin('GET', `/receipts/${id}`)).status, id).to.equal(200);
    // The token, the browser session and the TOTP enrolment still work.
    expect((await gw2.chat(p.token, body())).status).to.equal(200);
    const again = new Browser(gw2);
    again.cookie = person.cookie;
    expect((await again.get('api', '/v1/session')).body).to.deep.include({ valid: true, principalId: personId });
    now += 30_000; // the next TOTP step: the enrolling code's step was used
    const signIn = new Browser(gw2);
    expect((await login(signIn, a)).verify.body.secondFactor).to.equal('totp');
    expect((await signIn.post('auth', '/v1/totp/verify', { code: codeAt(secret, now) })).status).to.equal(200);

    // Balances whole; once the reservations the copy caught in flight expire, spent = what the receipts charged.
    const balance = async () => (await gw2.admin('GET', `/principals/${enc(p.id)}/billing`)).body.balances[0] as Record<string, number>;
    const b = await balance();
    expect(b['availableMicroUSD']).to.equal(b['grantedMicroUSD']! - b['spentMicroUSD']! - b['reservedMicroUSD']!);
    expect(b['grantedMicroUSD']).to.equal(granted);
    now += 2 * 3_600_000;
    const settled = await balance();
    expect(settled['reservedMicroUSD']).to.equal(0);
    const receipts = (await gw2.admin('GET', `/principals/${enc(p.id)}/receipts?day=2030-05-03`)).body.data as Array<Record<string, number>>;
    expect(settled['spentMicroUSD']).to.equal(receipts.reduce((n, r) => n + r['chargedMicroUSD']!, 0));
    expect(settled['availableMicroUSD']).to.equal(granted - settled['spentMicroUSD']!);

    // The restored log extends the checkpoint published before the copy.
    const keyFile = join(work, 'receipt-key.pem');
    writeFileSync(keyFile, receiptKey);
    const audit = await cli(['receipt', 'audit', '--from', checkpoint, '--to', 'latest', '--key', keyFile, '--url', gw2.apiUrl]);
    expect(audit.code, audit.stderr + audit.stdout).to.equal(0);
    expect(audit.stdout).to.match(/^consistent: /m);
  });
});
