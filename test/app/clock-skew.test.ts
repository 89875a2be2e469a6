/**
 * Gateways sharing one Redis need not agree on the time: job leases and reservation expiries are written as
 * "this long from now" and judged on the Redis server's clock. So an instance whose wall clock runs ahead
 * sweeps nothing another instance is still running: 20 s ahead (far past a 3 s lease) it fails no job,
 * 49 h ahead (past a reservation's hour) it releases no hold (which would have made the call free). The
 * healthy instance's slow call answers 200 and is charged once, at the usage its upstream reported.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { smallLimitsRoot } from '../helpers/billing.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { until } from '../helpers/wait.js';

const SKEWED_CLOCK = fileURLToPath(new URL('../helpers/skewed-clock.mjs', import.meta.url));

/**
 * No free allowance (every call is paid), and a lease far shorter than the skew, swept often, so a wrong sweep
 * would show within a call. The lease is 3 s, not less: the healthy gateway runs in the test process and renews
 * every third of it, and a busy machine that stalled it past a shorter lease would fail its job for that reason
 * alone, whatever the clocks say.
 */
function root(): string {
  const r = smallLimitsRoot(0);
  editFile(r, 'config/gateway.yaml', (t) => t.replace('leaseMs: 15000', 'leaseMs: 3000').replace('sweepEveryMs: 5000', 'sweepEveryMs: 200'));
  return r;
}

describe('gateways whose clocks disagree', function () {
  // Each test starts a gateway process, which its helper gives up to a minute (START_MS) on a busy machine.
  this.timeout(90_000);
  let redis: RedisServer;
  let upstream: RecordingUpstream;
  let healthy: TestGateway;

  /** Another gateway process on the same Redis whose wall clock (Date) runs `skewMs` ahead. */
  const skewed = (skewMs: number): Promise<GatewayProcess> =>
    spawnGateway(root(), {
      REDIS_URL: redis.url,
      PORTCULLIS_ROUTE_SHARED_URL: upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: upstream.baseUrl,
      PORTCULLIS_ADMIN_TOKEN: 'test-operator-token',
      SKEW_MS: String(skewMs),
      NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${SKEWED_CLOCK}`.trim(),
    });
  const status = async (apiUrl: string, token: string) =>
    ((await (await fetch(`${apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as any).balances[0] as Record<
      string,
      number
    >;
  const paidPrincipal = async () => {
    const p = await healthy.principal();
    expect((await healthy.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 1_000_000 })).status).to.equal(201);
    return p;
  };
  const slowCall = { model: 'shared-general-a', max_tokens: 256, messages: [{ role: 'user', content: 'take your time' }] };
  const usage = { prompt_tokens: 10, completion_tokens: 200 }; // 10 x 0.9 + 200 x 4.5 = 909 micro-USD, within the hold

  before(async () => {
    redis = await startRedisServer();
    upstream = await startRecordingUpstream();
    healthy = await startTestGateway({ root: root(), upstreamUrl: upstream.baseUrl, redisUrl: redis.url });
  });
  after(async () => {
    await healthy?.close();
    await upstream?.stop();
    await redis?.stop();
  });
  beforeEach(() => upstream.reset());

  it("a gateway 20 s ahead fails none of another's running jobs: the slow call answers and is charged once", async () => {
    const ahead = await skewed(20_000);
    try {
      const p = await paidPrincipal();
      // Runs past a lease (3 s), renewed meanwhile, while the skewed gateway sweeps every 200 ms.
      await upstream.behave({ mode: 'echo', delayMs: 3500, content: 'long answer', usage });
      const res = await healthy.chat(p.token, slowCall);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.choices[0].message.content).to.equal('long answer');
      expect(res.body).to.include({ billing: 'paid', chargedMicroUSD: 909 });
      expect(await upstream.requests()).to.have.length(1);
      expect(await status(healthy.apiUrl, p.token)).to.deep.include({ spentMicroUSD: 909, reservedMicroUSD: 0 });
    } finally {
      await ahead.stop();
    }
  });

  it("a gateway 49 h ahead releases none of another's reservations: the call in flight is still held and charged", async () => {
    const ahead = await skewed(49 * 3_600_000);
    try {
      const p = await paidPrincipal();
      await upstream.behave({ mode: 'echo', delayMs: 2500, content: 'long answer', usage });
      const pending = healthy.chat(p.token, slowCall);
      await until(async () => (await upstream.requests()).length > 0, { what: 'the upstream call' });
      // A balance read on the skewed gateway sweeps expired reservations first: the call's hold is not one.
      expect((await status(ahead.apiUrl, p.token))['reservedMicroUSD']).to.be.above(0);
      const res = await pending;
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body).to.include({ billing: 'paid', chargedMicroUSD: 909 });
      const receipt = (await healthy.admin('GET', `/receipts/${res.body.receiptId}`)).body;
      expect(receipt).to.include({ chargedMicroUSD: 909 });
      expect(receipt, JSON.stringify(receipt)).not.to.have.property('note');
      expect(await status(healthy.apiUrl, p.token)).to.deep.include({ spentMicroUSD: 909, reservedMicroUSD: 0 });
    } finally {
      await ahead.stop();
    }
  });
});
