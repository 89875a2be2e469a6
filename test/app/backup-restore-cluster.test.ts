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
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisCluster, type ClusterNode, type RedisCluster } from '../helpers/redis-cluster.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { smallLimitsRoot } from '../helpers/billing.js';
import { until } from '../helpers/wait.js';
import { answeredAtLeast, expectRestored, holdings, keepCheckpoint, ORIGINS, paidCalls } from '../helpers/backup-restore.js';

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
    const held = await holdings(gw, now, 'cluster-backup-grant');

    // Paid calls in flight the whole time the copies are taken.
    const calls = paidCalls(gw, held.principal.token);
    await answeredAtLeast(calls, 10);
    // A checkpoint a reviewer kept, published before the copy.
    const checkpoint = join(work, 'before.txt');
    await keepCheckpoint(gw, checkpoint);

    // The copy, on every master: rewrites paused everywhere first (so no file set changes under the copy),
    // then each master's appendonlydir copied, then rewrites resumed.
    const masters = (await source.nodes()).filter((n) => n.role === 'master' && n.slots.length > 0);
    expect(masters).to.have.length(3);
    const serverOf = (port: number) => source.servers.find((s) => s.port === port)!;
    for (const m of masters) await source.cli(m.port, 'CONFIG', 'SET', 'auto-aof-rewrite-percentage', '0');
    for (const m of masters) {
      await until(async () => !(await source.cli(m.port, 'INFO', 'persistence')).includes('aof_rewrite_in_progress:1'), {
        what: `a running AOF rewrite on ${m.port} to end`,
      });
    }
    const copiedFrom = Date.now();
    const mustHave = calls.answered.filter((x) => x.at < copiedFrom).map((x) => x.id);
    const backups = masters.map((m) => {
      const to = join(work, `master-${m.port}`, 'appendonlydir');
      cpSync(join(serverOf(m.port).dir, 'appendonlydir'), to, { recursive: true });
      return { slots: slotsOf(m), dir: to };
    });
    for (const m of masters) await source.cli(m.port, 'CONFIG', 'SET', 'auto-aof-rewrite-percentage', '100');
    // The deployment's state is spread over the masters: a copy of the money master alone would not do.
    const holding = (await Promise.all(masters.map(async (m) => Number((await source.cli(m.port, 'DBSIZE')).trim())))).filter((n) => n > 0);
    expect(holding.length, 'masters holding keys').to.be.at.least(2);

    await answeredAtLeast(calls, calls.answered.length + 5);
    expect(await calls.stop()).to.be.greaterThan(mustHave.length);

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

    await expectRestored(gw2, held, { mustHave, day: '2030-05-03', now: clock, advance: (ms) => (now += ms), checkpoint, receiptKey, work });
  });
});
