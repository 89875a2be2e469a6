/**
 * Rate limits from config, enforced in the store so every instance shares them: two
 * gateways on one Redis refuse a principal's call past its per-minute limit with 429 `rate-limited` and a
 * `retry-after`, forwarding and charging nothing for it; failed token attempts per client address and
 * public-route requests per client address are limited the same way; a daily-allowance refusal says how
 * long until 00:00 UTC.
 */
import { expect } from 'chai';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { body, smallLimitsRoot } from '../helpers/billing.js';

describe('rate limits shared by every instance', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let up: RecordingUpstream;
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    [redis, up] = await Promise.all([startRedisServer(), startRecordingUpstream()]);
    const root = smallLimitsRoot(1000);
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('perPrincipal: 600', 'perPrincipal: 4')
        .replace('perAddress: 300', 'perAddress: 3')
        .replace('failedAuthPerAddress: 30', 'failedAuthPerAddress: 3\n  addressHeader: x-forwarded-for'),
    );
    [a, b] = await Promise.all([
      startTestGateway({ root, upstreamUrl: up.baseUrl, redisUrl: redis.url }),
      startTestGateway({ root, upstreamUrl: up.baseUrl, redisUrl: redis.url }),
    ]);
  });
  after(async () => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([up.stop(), redis.stop()]);
  });
  beforeEach(() => up.reset());

  it('refuses a principal past its calls per minute across two gateways, 429 with retry-after, nothing forwarded', async () => {
    const p = await a.principal();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await (i % 2 ? b : a).chat(p.token, body())).status);
    expect(statuses).to.deep.equal([200, 200, 200, 200]);
    for (const gw of [a, b]) {
      const refused = await gw.chat(p.token, body());
      expect(refused.status).to.equal(429);
      expect(refused.body.error.code).to.equal('rate-limited');
      expect(refused.body.error.message).to.contain('calls for this principal');
      const retry = Number(refused.headers.get('retry-after'));
      expect(retry).to.be.within(1, 120);
    }
    expect(await up.requests()).to.have.length(4);
    // Another principal is not affected.
    const q = await b.principal();
    expect((await a.chat(q.token, body())).status).to.equal(200);
  });

  it('refuses an address after its failed token attempts, on every gateway, before looking at any token', async () => {
    const from = { 'x-forwarded-for': '198.51.100.7' };
    const bad = 'pcl_pat_000000000000000000000000000000000000AAAAAA';
    for (let i = 0; i < 3; i++) expect((await (i % 2 ? b : a).chat(bad, body(), from)).status).to.equal(401);
    const blocked = await a.chat(bad, body(), from);
    expect(blocked.status).to.equal(429);
    expect(blocked.body.error.message).to.contain('failed authentication attempts');
    expect(Number(blocked.headers.get('retry-after'))).to.be.within(1, 120);
    expect((await b.chat(bad, body(), from)).status).to.equal(429);
    // A valid token from the blocked address waits too on the gateway that remembers the block...
    const p = await a.principal();
    expect((await a.chat(p.token, body(), from)).status).to.equal(429);
    // ...and another address is untouched.
    expect((await a.chat(p.token, body(), { 'x-forwarded-for': '198.51.100.8' })).status).to.equal(200);
  });

  it('counts wrong operator tokens on the admin listener the same way, shared with the API listener', async () => {
    const from = { 'x-forwarded-for': '192.0.2.44' };
    const adminGet = (gw: TestGateway, token: string) => fetch(`${gw.adminUrl}/admin/runtime`, { headers: { authorization: `Bearer ${token}`, ...from } });
    for (let i = 0; i < 3; i++) expect((await adminGet(i % 2 ? b : a, `wrong-operator-token-${i}`)).status).to.equal(401);
    const blocked = await adminGet(a, 'wrong-operator-token-4');
    expect(blocked.status).to.equal(429);
    expect(((await blocked.json()) as any).error).to.deep.include({ code: 'rate-limited' });
    // The same address on the API listener of that process is refused before its token is read.
    const p = await a.principal();
    expect((await a.chat(p.token, body(), from)).status).to.equal(429);
  });

  it('limits a public route per client address', async () => {
    const get = (gw: TestGateway, ip: string) => fetch(`${gw.apiUrl}/v1/models`, { headers: { 'x-forwarded-for': `10.0.0.1, ${ip}` } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(i % 2 ? b : a, '203.0.113.5')).status);
    expect(statuses.every((s) => s !== 429)).to.equal(true);
    const refused = await get(b, '203.0.113.5');
    expect(refused.status).to.equal(429);
    expect(((await refused.json()) as any).error.code).to.equal('rate-limited');
    expect(refused.headers.get('retry-after')).to.match(/^\d+$/);
    expect((await get(a, '203.0.113.6')).status).not.to.equal(429);
  });
});

describe('daily allowance refusal', () => {
  it('carries retry-after: the seconds to 00:00 UTC', async () => {
    const [redis, up] = await Promise.all([startRedisServer(), startRecordingUpstream()]);
    const gw = await startTestGateway({ root: smallLimitsRoot(1), upstreamUrl: up.baseUrl, redisUrl: redis.url });
    try {
      const p = await gw.principal();
      expect((await gw.chat(p.token, body())).status).to.equal(200);
      const refused = await gw.chat(p.token, body());
      expect(refused.status).to.equal(429);
      expect(refused.body.error.code).to.equal('daily-allowance-exhausted');
      const now = Date.now();
      const toMidnight = Math.ceil((Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate() + 1) - now) / 1000);
      expect(Number(refused.headers.get('retry-after'))).to.be.within(toMidnight - 5, toMidnight + 5);
    } finally {
      await gw.close();
      await Promise.all([up.stop(), redis.stop()]);
    }
  });
});
