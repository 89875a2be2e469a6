/**
 * A Redis Cluster's money master dies under two gateways, three times in a row: SIGKILLed while paid calls
 * keep coming, its replica promoted by the cluster itself (node timeout 1 s), the dead master restarted as
 * the new master's replica before the next kill. What callers see: 200s, then `503 store-unavailable` (fail
 * closed, never a hang, never a 200 on a write that did not happen) while the slot has no master, then 200s
 * again without restarting anything. What the books show afterwards: every answered call's receipt survived
 * every promotion (settlements are answered only once a replica holds them), what was spent is exactly what
 * the receipts charged, and no reservation outlives its expiry.
 */
import { expect } from 'chai';
import { startRedisCluster, type RedisCluster } from '../helpers/redis-cluster.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { body, smallLimitsRoot, WORST } from '../helpers/billing.js';

const enc = encodeURIComponent;

interface Call {
  gateway: 'a' | 'b';
  phase: 'before' | 'down' | 'after';
  status: number;
  code: string | null;
  receiptId: string | null;
}

describe('a redis cluster failover under two gateways', function () {
  this.timeout(120_000);
  let clock = Date.parse('2030-03-14T12:00:00.000Z');
  let cluster: RedisCluster;
  let upstream: RecordingUpstream;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    [cluster, upstream] = await Promise.all([startRedisCluster({ replicas: 1 }), startRecordingUpstream()]);
    await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
    const env = { REDIS_CLUSTER_NODES: cluster.seeds.join(',') };
    // Three failovers in a row send more paid calls a minute than one principal's rate limit allows.
    const root = smallLimitsRoot(0);
    editFile(root, 'config/gateway.yaml', (t) => t.replace('perPrincipal: 600', 'perPrincipal: 1000000'));
    a = await startTestGateway({ upstreamUrl: upstream.baseUrl, root, env, now: () => clock });
    b = await startTestGateway({ upstreamUrl: upstream.baseUrl, root: a.root, env, now: () => clock });
  });
  after(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([upstream?.stop(), cluster?.stop()]);
  });

  it('answers 503 store-unavailable while the slot has no master, heals on the promoted replica, and loses no money', async () => {
    const p = await a.principal();
    const GRANT = 100_000 * WORST;
    expect((await a.admin('POST', `/principals/${enc(p.id)}/credits`, { microUSD: GRANT })).status).to.equal(201);

    const calls: Call[] = [];
    let phase: Call['phase'] = 'before';
    let stop = false;
    const caller = async (gateway: 'a' | 'b'): Promise<void> => {
      const gw = gateway === 'a' ? a : b;
      while (!stop) {
        const at = phase;
        const res = await gw.chat(p.token, body());
        calls.push({
          gateway,
          phase: at === phase ? at : 'down',
          status: res.status,
          code: res.body?.error?.code ?? null,
          receiptId: res.body?.receiptId ?? null,
        });
        if (res.status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
    };
    const running = Promise.all([caller('a'), caller('b')]);
    const answered = (ph: Call['phase'], gw?: 'a' | 'b') => calls.filter((c) => c.phase === ph && c.status === 200 && (!gw || c.gateway === gw)).length;
    const waitFor = async (what: () => boolean): Promise<void> => {
      for (let i = 0; i < 600 && !what(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(what()).to.equal(true);
    };

    for (let round = 0; round < 3; round++) {
      // The deployment's keys share the prefix's hash tag (src/store/redis.ts): one master serves them all.
      const master = await cluster.masterOf('{pc}:bill');
      const replica = await cluster.replicaOf(master);
      const done = answered('after');
      await waitFor(() => answered(round === 0 ? 'before' : 'after') >= done + 10);
      phase = 'down';
      await master.kill('SIGKILL');
      await cluster.waitForPromotion(replica.port);
      phase = 'after';
      // Both gateways heal by themselves: the cluster client learns the new master of the slot.
      const healed = { a: answered('after', 'a'), b: answered('after', 'b') };
      await waitFor(() => answered('after', 'a') >= healed.a + 5 && answered('after', 'b') >= healed.b + 5);
      // The dead master comes back as the new master's replica, in sync, before the next kill.
      await master.restart();
      await cluster.waitForReplicaInSync(master.port);
    }
    stop = true;
    await running;

    // What callers saw: only 200s and fail-closed 503s, never another status or a hang.
    for (const c of calls) {
      expect(c.status, JSON.stringify(c)).to.be.oneOf([200, 503]);
      if (c.status === 503) expect(c.code).to.equal('store-unavailable');
    }
    const refused = calls.filter((c) => c.status === 503).length;
    expect(refused, 'calls refused while the slot had no master').to.be.greaterThan(0);

    // A call refused after its reservation was made leaves the reservation held until it expires (the
    // longest a job may run, plus its lease, the sweep and a minute: about 61 min here). Past that, the
    // status read sweeps it: nothing stays held.
    clock += 2 * 60 * 60 * 1000;
    await a.admin('GET', `/principals/${enc(p.id)}/billing`);
    const balance = (await b.admin('GET', `/principals/${enc(p.id)}/billing`)).body.balances[0];
    const receipts = (await b.admin('GET', `/principals/${enc(p.id)}/receipts?day=2030-03-14`)).body.data as Array<Record<string, any>>;
    const ids = new Set(receipts.map((r) => r['id']));
    expect(ids.size, 'no receipt twice').to.equal(receipts.length);
    for (const c of calls.filter((x) => x.status === 200)) expect(ids.has(c.receiptId), `receipt ${c.receiptId} of an answered call`).to.equal(true);
    const charged = receipts.reduce((n, r) => n + (r['chargedMicroUSD'] as number), 0);
    expect(balance.spentMicroUSD, 'spent is exactly what the receipts charged').to.equal(charged);
    expect(balance.reservedMicroUSD).to.equal(0);
    expect(balance.grantedMicroUSD).to.equal(GRANT);
    expect(balance.availableMicroUSD).to.equal(GRANT - charged);
    // Every answered call was charged once, at the worst case the upstream reported.
    expect(charged).to.be.at.least(calls.filter((c) => c.status === 200).length * WORST);
  });
});
