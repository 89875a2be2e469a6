/**
 * Graceful shutdown: readiness goes false while draining and in-flight calls finish;
 * a call still running past the grace period is answered 503 job-interrupted and charged nothing; and a
 * rolling restart of two gateway processes under load loses no call and charges nothing twice.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestGateway, editFile } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { body, smallLimitsRoot } from '../helpers/billing.js';
import { until } from '../helpers/wait.js';

async function waitForRequests(up: RecordingUpstream, n: number): Promise<void> {
  await until(async () => (await up.requests()).length >= n, { what: `${n} upstream calls` });
}

describe('graceful shutdown', function () {
  this.timeout(120_000);
  let up: RecordingUpstream;
  let redis: RedisServer;

  before(async () => {
    [up, redis] = await Promise.all([startRecordingUpstream(), startRedisServer()]);
  });
  after(async () => {
    await Promise.all([up.stop(), redis.stop()]);
  });
  beforeEach(() => up.reset());

  it('goes not-ready, lets the call in flight finish, then stops accepting', async () => {
    const root = smallLimitsRoot();
    editFile(root, 'config/gateway.yaml', (t) => t.replace('drainDelayMs: 0', 'drainDelayMs: 500'));
    const gw = await startTestGateway({ root, upstreamUrl: up.baseUrl, redisUrl: redis.url });
    const p = await gw.principal();
    await up.behave({ mode: 'echo', delayMs: 1500 });
    const inFlight = gw.chat(p.token, body());
    await waitForRequests(up, 1);
    const stopping = gw.shutdown();
    const ready = await fetch(`${gw.apiUrl}/readyz`);
    expect(ready.status).to.equal(503);
    expect(((await ready.json()) as { error: { message: string } }).error.message).to.contain('failed: serving');
    const answered = await inFlight;
    expect(answered.status).to.equal(200);
    expect(answered.body.receiptId).to.be.a('string');
    await stopping;
    let refused = false;
    try {
      await fetch(`${gw.apiUrl}/healthz`);
    } catch {
      refused = true;
    }
    expect(refused).to.equal(true);
  });

  it('answers a call still running after the grace period 503 job-interrupted, charging nothing', async () => {
    const root = smallLimitsRoot(0);
    editFile(root, 'config/gateway.yaml', (t) => t.replace('graceMs: 30000', 'graceMs: 300'));
    const gw = await startTestGateway({ root, upstreamUrl: up.baseUrl, redisUrl: redis.url });
    const p = await gw.principal();
    expect((await gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 100_000 })).status).to.equal(201);
    await up.behave({ mode: 'echo', delayMs: 5000 });
    const inFlight = gw.chat(p.token, body());
    await waitForRequests(up, 1);
    const balanceBefore = await (await fetch(`${gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${p.token}` } })).json();
    expect((balanceBefore as any).balances[0].reservedMicroUSD).to.be.greaterThan(0);
    await gw.shutdown();
    const answered = await inFlight;
    expect(answered.status).to.equal(503);
    expect(answered.body.error.code).to.equal('job-interrupted');
    // A second gateway on the same store sees the money: nothing spent, nothing left held.
    const other = await startTestGateway({ root, upstreamUrl: up.baseUrl, redisUrl: redis.url });
    try {
      const status = (await (await fetch(`${other.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${p.token}` } })).json()) as any;
      expect(status.balances[0]).to.include({ spentMicroUSD: 0, reservedMicroUSD: 0 });
    } finally {
      await other.close();
    }
  });

  it('loses no call and charges nothing twice across a rolling restart of two gateways under load', async () => {
    const root = smallLimitsRoot(0);
    const env = {
      REDIS_URL: redis.url,
      PORTCULLIS_ROUTE_SHARED_URL: up.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: up.baseUrl,
      PORTCULLIS_ADMIN_TOKEN: 'rolling-operator-token',
    };
    const gws: GatewayProcess[] = await Promise.all([spawnGateway(root, env), spawnGateway(root, env)]);
    const admin = async (path: string, payload: unknown) => {
      const res = await fetch(`${gws[0]!.adminUrl}/admin${path}`, {
        method: 'POST',
        headers: { authorization: 'Bearer rolling-operator-token', 'content-type': 'application/json' },
        body: JSON.stringify(payload),
      });
      return (await res.json()) as any;
    };
    const principal = (await admin('/principals', { tenant: `rolling-${Date.now()}` })).id as string;
    await admin(`/principals/${encodeURIComponent(principal)}/credits`, { microUSD: 50_000_000 });
    const token = (await admin(`/principals/${encodeURIComponent(principal)}/tokens`, { label: 'rolling' })).token as string;
    await up.behave({ mode: 'echo', delayMs: 250 });

    // The client side plays the balancer: round robin over the live gateways; a connection that fails or an
    // instance that says it is not ready is retried on the other with the same body (the same job).
    let turn = 0;
    const answers: Array<{ receiptId: string; charged: number; content: string }> = [];
    const failures: string[] = [];
    let running = true;
    const call = async (payload: ReturnType<typeof body>) => {
      // Round robin picks the first instance; each retry goes to the next one, as a balancer's retry does (a
      // shared turn counter alone could hand one caller the same stopped instance again and again).
      const first = turn++;
      for (let attempt = 0; attempt < 20; attempt++) {
        const gw = gws[(first + attempt) % gws.length]!;
        try {
          const res = await fetch(`${gw.apiUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify(payload),
          });
          const json = (await res.json()) as any;
          if (res.status === 200) return answers.push({ receiptId: json.receiptId, charged: json.chargedMicroUSD, content: payload.messages[0]!.content });
          if (res.status === 503 && json.error?.code === 'not-ready') {
            await sleep(20);
            continue;
          }
          return failures.push(`${res.status} ${json.error?.code}`);
        } catch {
          await sleep(50); // connection refused or cut: the balancer tries the other instance
        }
      }
      failures.push('no gateway answered');
    };
    const workers = Array.from({ length: 6 }, async () => {
      while (running) await call(body());
    });

    // Under load before, between and after the restarts: a few more calls answered each time.
    const moreAnswers = async (what: string) => {
      const n = answers.length;
      await until(() => answers.length >= n + 4, { what });
    };
    await moreAnswers('calls answered before the first restart');
    for (const i of [0, 1]) {
      await gws[i]!.stop(); // SIGTERM: drains, lets calls in flight finish, exits
      gws[i] = await spawnGateway(root, env);
      await moreAnswers(`calls answered after restarting gateway ${i}`);
    }
    running = false;
    await Promise.all(workers);
    await Promise.all(gws.map((g) => g.stop()));

    expect(failures).to.deep.equal([]);
    expect(answers.length).to.be.greaterThan(10);
    // Each call ran upstream once, and has one receipt: nothing ran or was charged twice.
    const prompts = (await up.requests()).map((r) => (r.body['messages'] as Array<{ content: string }>)[0]!.content);
    expect(new Set(prompts).size).to.equal(prompts.length);
    expect(new Set(answers.map((a) => a.receiptId)).size).to.equal(answers.length);
    for (const a of answers) expect(prompts).to.include(a.content);
    // The money: what the answers say they were charged is exactly what was spent, nothing still held.
    const check = await spawnGateway(root, env);
    try {
      const status = (await (await fetch(`${check.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as any;
      const charged = answers.reduce((sum, a) => sum + a.charged, 0);
      expect(status.balances[0]).to.include({ spentMicroUSD: charged, reservedMicroUSD: 0 });
      expect(charged).to.be.greaterThan(0);
    } finally {
      await check.stop();
    }
  });
});
