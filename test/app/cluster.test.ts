/**
 * Two gateways on a real Redis Cluster (three masters, REDIS_CLUSTER_NODES), the way an operator who
 * outgrew one primary runs them: money under a burst split across both (no overspend, every call has its
 * receipt and its leaf in the one receipt log), a revocation on one seen by the other at once, and a job
 * submitted to one polled from the other.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { body, smallLimitsRoot, WORST } from '../helpers/billing.js';
import { until } from '../helpers/wait.js';

const enc = encodeURIComponent;

describe('two gateways on a redis cluster', function () {
  this.timeout(90_000);
  const now = Date.parse('2030-03-14T12:00:00.000Z');
  let cluster: RedisCluster;
  let upstream: RecordingUpstream;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    [cluster, upstream] = await Promise.all([startRedisCluster(), startRecordingUpstream()]);
    await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
    const env = { REDIS_CLUSTER_NODES: cluster.seeds.join(',') };
    a = await startTestGateway({ upstreamUrl: upstream.baseUrl, root: smallLimitsRoot(0), env, now: () => now });
    b = await startTestGateway({ upstreamUrl: upstream.baseUrl, root: a.root, env, now: () => now });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([upstream?.stop(), cluster?.stop()]);
  });

  it('admits exactly what the credits cover of a simultaneous burst split across both, with a receipt and a log leaf each', async () => {
    const BURST = 120;
    const COVERED = 25;
    const p = await a.principal();
    await a.admin('POST', `/principals/${enc(p.id)}/credits`, { microUSD: COVERED * WORST });
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const calls = Array.from({ length: BURST }, async (_, i) => {
      const b_ = body();
      await gate;
      return (i % 2 === 0 ? a : b).chat(p.token, b_);
    });
    open();
    const results = await Promise.all(calls);
    const admitted = results.filter((r) => r.status === 200);
    expect(admitted).to.have.length(COVERED);
    expect(results.filter((r) => r.status !== 200).map((r) => r.body.error.code)).to.satisfy((cs: string[]) => cs.every((c) => c === 'insufficient-credits'));

    // Read back through the other gateway: the books agree whichever instance is asked.
    const balance = (await b.admin('GET', `/principals/${enc(p.id)}/billing`)).body.balances[0];
    expect(balance).to.deep.equal({ scope: 'ai', grantedMicroUSD: COVERED * WORST, spentMicroUSD: COVERED * WORST, reservedMicroUSD: 0, availableMicroUSD: 0 });
    const receipts = (await b.admin('GET', `/principals/${enc(p.id)}/receipts?day=2030-03-14`)).body.data as Array<Record<string, any>>;
    expect(receipts).to.have.length(BURST);
    expect(receipts.reduce((n, r) => n + (r['chargedMicroUSD'] as number), 0)).to.equal(balance.spentMicroUSD);
    const ids = new Set(receipts.map((r) => r['id']));
    for (const r of admitted) expect(ids.has(r.body.receiptId), `receipt ${r.body.receiptId} of an answered call`).to.equal(true);
    // One sequence for the deployment: every receipt is a distinct leaf of the one log.
    const leaves = receipts.map((r) => r['logIndex'] as number);
    expect(new Set(leaves).size).to.equal(BURST);
    for (const i of leaves) expect(i).to.be.a('number').and.at.least(0);
  });

  it('spreads the deployment over more than one master, the money on one', async () => {
    const counts = await Promise.all(cluster.servers.map(async (s) => Number((await cluster.cli(s.port, 'DBSIZE')).trim())));
    expect(counts.filter((n) => n > 0).length, `keys per master: ${counts.join(', ')}`).to.be.at.least(2);
    // The money keys share one slot (docs/operators.md, "Redis Cluster"): its master holds the most.
    const money = await cluster.masterOf('{pc}:');
    expect(counts[cluster.servers.indexOf(money)]).to.equal(Math.max(...counts));
  });

  it('sees a revocation made on one gateway on the other from the next request', async () => {
    const p = await a.principal();
    await a.admin('POST', `/principals/${enc(p.id)}/credits`, { microUSD: 10 * WORST });
    expect((await b.chat(p.token, body())).status).to.equal(200);
    expect((await a.admin('POST', `/tokens/${p.tokenId}/revoke`)).status).to.equal(200);
    for (const gw of [b, a]) {
      const res = await gw.chat(p.token, body());
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('token-revoked');
    }
  });

  it('answers a job submitted to one gateway when it is polled from the other', async () => {
    const p = await a.principal({ rung: 'card' });
    await a.admin('POST', `/principals/${enc(p.id)}/credits`, { microUSD: 10 * WORST });
    const job = { model: 'red-whitehacker-a', task: 'code-review', scopeId: 'owned', max_tokens: 90, messages: [{ role: 'user', content: 'review' }] };
    const submitted = await fetch(`${a.apiUrl}/v1/research/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}`, 'idempotency-key': randomUUID() },
      body: JSON.stringify(job),
    });
    const q = (await submitted.json()) as { jobId: string; receiptId: string };
    expect(submitted.status).to.be.oneOf([200, 202]);
    const polled = await until(
      async () => {
        const res = await fetch(`${b.apiUrl}/v1/research/job?jobId=${q.jobId}`, { headers: { authorization: `Bearer ${p.token}` } });
        const r = { status: res.status, body: (await res.json()) as any };
        return r.body.status === 'succeeded' ? r : null;
      },
      { what: `job ${q.jobId} to succeed, read on the other gateway` },
    );
    expect(polled.status).to.equal(200);
    expect(polled.body).to.include({ jobId: q.jobId, status: 'succeeded' });
    expect(polled.body.receiptId).to.equal(q.receiptId);
  });
});
