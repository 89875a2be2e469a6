/**
 * Gateways sharing one Redis need not agree on the time: job leases are written as "this long from now" and
 * judged on the Redis server's clock, so an instance whose clock runs 20 s ahead (far past a lease) sweeps
 * no job another instance is still running. The healthy instance's slow call answers 200 and is charged
 * once, at the usage its upstream reported.
 */
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { smallLimitsRoot } from '../helpers/billing.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';

const SKEWED_CLOCK = fileURLToPath(new URL('../helpers/skewed-clock.mjs', import.meta.url));

/** No free allowance (every call is paid), and a short lease swept often, so a wrong sweep would show within a call. */
function root(): string {
  const r = smallLimitsRoot(0);
  editFile(r, 'config/gateway.yaml', (t) => t.replace('leaseMs: 15000', 'leaseMs: 600').replace('sweepEveryMs: 5000', 'sweepEveryMs: 200'));
  return r;
}

describe('gateways whose clocks disagree', () => {
  let redis: RedisServer;
  let upstream: RecordingUpstream;
  let healthy: TestGateway;
  /** Another process on the same Redis whose wall clock (Date) runs 20 s ahead. */
  let ahead: GatewayProcess;

  before(async () => {
    redis = await startRedisServer();
    upstream = await startRecordingUpstream();
    healthy = await startTestGateway({ root: root(), upstreamUrl: upstream.baseUrl, redisUrl: redis.url });
    ahead = await spawnGateway(root(), {
      REDIS_URL: redis.url,
      PORTCULLIS_ROUTE_SHARED_URL: upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: upstream.baseUrl,
      PORTCULLIS_ADMIN_TOKEN: 'test-operator-token',
      SKEW_MS: '20000',
      NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${SKEWED_CLOCK}`.trim(),
    });
  });
  after(async () => {
    await ahead?.stop();
    await healthy?.close();
    await upstream?.stop();
    await redis?.stop();
  });

  it("a gateway 20 s ahead fails none of another's running jobs: the slow call answers and is charged once", async () => {
    const p = await healthy.principal();
    expect((await healthy.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 1_000_000 })).status).to.equal(201);
    // Runs for several leases (600 ms) while the skewed gateway sweeps every 200 ms.
    await upstream.behave({ mode: 'echo', delayMs: 2500, content: 'long answer', usage: { prompt_tokens: 1000, cached_tokens: 400, completion_tokens: 2000 } });
    const res = await healthy.chat(p.token, { model: 'shared-general-a', max_tokens: 256, messages: [{ role: 'user', content: 'take your time' }] });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    expect(res.body.choices[0].message.content).to.equal('long answer');
    expect(res.body).to.include({ billing: 'paid', chargedMicroUSD: 9630 });
    expect(await upstream.requests()).to.have.length(1);
    const status = await fetch(`${healthy.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${p.token}` } });
    expect(((await status.json()) as any).balances[0]).to.deep.include({ spentMicroUSD: 9630, reservedMicroUSD: 0 });
  });
});
