/**
 * Money writes wait for a replica (store.replicaAcks, Redis WAIT), on a real primary with a real replica:
 * every receipt a client was answered is already on the replica when the answer arrives (a failover right
 * after cannot lose it); with the replica frozen, calls are still answered (the write stands on the primary),
 * the shortfall is counted, and the receipt log's signer signs no checkpoint over the leaves the replica
 * lacks until it has them. Waits are grouped: many settlements share one WAIT.
 */
import { expect } from 'chai';
import { createClient } from 'redis';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, editFile, type TestGateway } from '../helpers/gateway.js';
import { body, smallLimitsRoot } from '../helpers/billing.js';
import { registry } from '../../src/observe/metrics.js';

async function until(check: () => Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const shortfalls = async () => (await registry.getSingleMetric('portcullis_store_replica_ack_shortfalls_total')!.get()).values[0]?.value ?? 0;

describe('money writes wait for a replica', function () {
  this.timeout(90_000);
  let primary: RedisServer;
  let replica: RedisServer;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  /** The same deployment, but willing to wait 20 s for the replica. */
  let patient: TestGateway;
  let onReplica: ReturnType<typeof createClient>;

  before(async () => {
    [primary, upstream] = await Promise.all([startRedisServer(), startRecordingUpstream()]);
    replica = await startRedisServer({ replicaOf: primary.port });
    onReplica = createClient({ url: replica.url });
    await onReplica.connect();
    await until(async () => (await onReplica.info('replication')).includes('master_link_status:up'), 'the replica to sync');
    await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
    const root = smallLimitsRoot(0);
    // Checkpoints often, so the test sees the signer's rounds; the replica confirms within 300 ms or not at all.
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('store:\n  kind: memory\n', `store:\n  kind: redis\n  url: ${primary.url}\n  replicaAckTimeoutMs: 300\n`)
        .concat('\nreceipts:\n  checkpointEveryMs: 100\n  leaseMs: 1000\n'),
    );
    gw = await startTestGateway({ root, upstreamUrl: upstream.baseUrl, redisUrl: primary.url });
    const patientRoot = smallLimitsRoot(0);
    editFile(patientRoot, 'config/gateway.yaml', (t) =>
      t.replace('store:\n  kind: memory\n', `store:\n  kind: redis\n  url: ${primary.url}\n  replicaAckTimeoutMs: 20000\n`),
    );
    patient = await startTestGateway({ root: patientRoot, upstreamUrl: upstream.baseUrl, redisUrl: primary.url });
  });
  after(async () => {
    await replica?.kill('SIGCONT').catch(() => undefined);
    await onReplica?.close();
    await gw?.close();
    await patient?.close();
    await Promise.all([upstream?.stop(), replica?.stop(), primary?.stop()]);
  });

  it('a paid call is not answered while the replica lacks its settlement; once answered, the replica has the receipt', async () => {
    const p = await patient.principal();
    await patient.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 10_000_000 });
    const seen = (await upstream.requests()).length;
    await replica.kill('SIGSTOP');
    let answered = false;
    const call = patient.chat(p.token, body()).finally(() => (answered = true));
    try {
      // The upstream answered long ago (it answers at once); the call waits on the replica alone.
      await until(async () => (await upstream.requests()).length > seen, 'the upstream call');
      // The settlement is written and its WAIT for the replica blocks on the primary: the call is held there.
      await until(async () => /blocked_clients:[1-9]/.test(await primaryInfo('clients')), 'the settlement blocked in WAIT on the replica');
      expect(answered, 'answered while the replica was frozen').to.equal(false);
    } finally {
      await replica.kill('SIGCONT');
    }
    const a = await call;
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(await onReplica.exists(`pc:r:${a.body.receiptId}`)).to.equal(1);
  });

  it('every receipt and grant a client was answered is already on the replica, and settlements share their waits', async () => {
    // The patient gateway: what it promises is that an answer waited for the replica, and the 300 ms one would
    // answer without it whenever a busy machine keeps the replica longer than that (a shortfall, counted).
    const p = await patient.principal();
    const grant = await patient.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 10_000_000, operationId: 'replica-grant' });
    expect(grant.status).to.equal(201);
    // Read from the replica at once, with no wait of our own: it has the grant already.
    expect(await onReplica.exists('pc:grant:replica-grant')).to.equal(1);
    const waitsBefore = Number(/cmdstat_wait:calls=(\d+)/.exec(await primaryInfo('commandstats'))?.[1] ?? 0);
    const answers = await Promise.all(Array.from({ length: 40 }, () => patient.chat(p.token, body())));
    for (const a of answers) {
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(await onReplica.exists(`pc:r:${a.body.receiptId}`), a.body.receiptId).to.equal(1);
    }
    const waits = Number(/cmdstat_wait:calls=(\d+)/.exec(await primaryInfo('commandstats'))?.[1] ?? 0) - waitsBefore;
    expect(waits).to.be.greaterThan(0);
    expect(waits, 'one WAIT per settlement would be 40').to.be.lessThan(40);
  });

  it('with the replica frozen: calls are answered, the shortfall counted, and no checkpoint covers the new leaves until the replica has them', async () => {
    const p = await gw.principal();
    await gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 10_000_000 });
    const size = async () => Number((await (await fetch(`${gw.apiUrl}/v1/receipts/log/checkpoint`)).text()).split('\n')[1]);
    // Whatever earlier calls left unsigned is signed first: every leaf sequenced is under the checkpoint.
    await until(async () => {
      const p = await gw.receipts.log.pending(1);
      return (p.checkpoint?.size ?? 0) === p.size;
    }, 'a checkpoint over every leaf so far');
    const before = await size();
    const missed = await shortfalls();
    await replica.kill('SIGSTOP');
    try {
      const a = await gw.chat(p.token, body());
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      expect(await shortfalls()).to.be.greaterThan(missed);
      // Several signer rounds pass (every 50 ms here); none signs over the leaf the replica has not confirmed.
      // A wait for time itself: the claim is about what the signer's timer does not do meanwhile.
      await new Promise((r) => setTimeout(r, 1500));
      expect(await size()).to.equal(before);
    } finally {
      await replica.kill('SIGCONT');
    }
    await until(async () => (await size()) > before, 'a checkpoint once the replica caught up');
  });

  async function primaryInfo(section: string): Promise<string> {
    const c = createClient({ url: primary.url });
    await c.connect();
    try {
      return await c.info(section);
    } finally {
      await c.close();
    }
  }
});
