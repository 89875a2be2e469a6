/**
 * Two gateways on one Redis, and on a Redis Cluster, each keeping the tokens and principals it uses in
 * memory (src/store/identity-cache.ts), under a steady load of calls on both: a PAT revoked, a principal
 * changed or a session signed out through gateway A is refused (or admitted) accordingly by gateway B on
 * the very next request, and still after B's tracking connections were killed. The event is the call on A
 * returning; nothing here waits for time. On one primary, MONITOR shows that B's second call of a token
 * reads no identity record from Redis.
 */
import { expect } from 'chai';
import { commandsDuring } from '../helpers/redis-monitor.js';
import { IDENTITY_BACKENDS, killTrackingConnections, startIdentityRedis, type IdentityRedis } from '../helpers/identity-cache.js';
import { RedisStore } from '../../src/store/redis.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { Browser } from '../helpers/browser.js';
import { body } from '../helpers/billing.js';
import { until } from '../helpers/wait.js';

const enc = encodeURIComponent;
const RED = { model: 'red-whitehacker-a', max_tokens: 64, messages: [{ role: 'user', content: 'triage this' }] };

for (const backend of IDENTITY_BACKENDS) {
  describe(`two gateways on ${backend}, identity cached in each`, function () {
    this.timeout(120_000);
    let redis: IdentityRedis | undefined;
    let upstream: RecordingUpstream;
    let a: TestGateway;
    let b: TestGateway;
    let stopLoad: () => Promise<number>;

    before(async () => {
      redis = await startIdentityRedis(backend);
      upstream = await startRecordingUpstream();
      await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 20 } });
      a = await startTestGateway({ upstreamUrl: upstream.baseUrl, ...redis.gateway });
      b = await startTestGateway({ upstreamUrl: upstream.baseUrl, ...redis.gateway, root: a.root });
      // The load: other principals' calls, four at a time on each gateway, for the whole suite.
      const busy = await Promise.all([a.principal(), a.principal()]);
      let running = true;
      let sent = 0;
      const workers = Array.from({ length: 8 }, async (_, i) => {
        while (running) {
          await (i % 2 === 0 ? a : b).chat(busy[i % 2]!.token, body());
          sent += 1;
        }
      });
      stopLoad = async () => {
        running = false;
        await Promise.all(workers);
        return sent;
      };
    });
    after(async () => {
      const sent = await stopLoad?.();
      expect(sent, 'calls of the background load').to.be.greaterThan(0);
      await Promise.all([a?.close(), b?.close()]);
      await Promise.all([upstream?.stop(), redis?.stop()]);
    });

    /** Calls B with the token until two answers match (the second from B's cache), and returns that status. */
    async function warm(token: string, make: () => unknown = body): Promise<number> {
      const first = await b.chat(token, make());
      const second = await b.chat(token, make());
      expect(second.status).to.equal(first.status);
      expect((b.store as RedisStore).identityCacheSize).to.be.greaterThan(0);
      return second.status;
    }

    it('refuses a PAT revoked on A at B from the very next request, while B has calls of it in flight', async () => {
      const p = await a.principal();
      expect(await warm(p.token)).to.equal(200);
      // Calls of the token keep going on B while the revocation is made on A.
      let revoked = false;
      let done = false;
      const after: Array<{ status: number; code?: string }> = [];
      const inFlight = Array.from({ length: 4 }, async () => {
        while (!done) {
          const startedAfter = revoked;
          const res = await b.chat(p.token, body());
          if (startedAfter) {
            after.push({ status: res.status, code: res.body?.error?.code });
            if (after.length >= 20) done = true;
          }
        }
      });
      const revocation = await a.admin('POST', `/tokens/${p.tokenId}/revoke`);
      revoked = true;
      expect(revocation.status).to.equal(200);
      const next = await b.chat(p.token, body());
      expect(next.status).to.equal(401);
      expect(next.body.error.code).to.equal('token-revoked');
      await Promise.all(inFlight);
      expect(
        after.filter((r) => r.status !== 401 || r.code !== 'token-revoked'),
        'calls started after the revocation returned',
      ).to.deep.equal([]);
    });

    it('serves a principal changed on A (a card rung granted) at B from the very next request', async () => {
      const p = await a.principal();
      expect(await warm(p.token, () => RED)).to.equal(403);
      expect((await b.chat(p.token, RED)).body.error.code).to.equal('verification-required');
      expect((await a.admin('POST', `/principals/${enc(p.id)}/rung`, { rung: 'card' })).status).to.equal(200);
      const next = await b.chat(p.token, RED);
      expect(next.status, JSON.stringify(next.body)).to.equal(200);
    });

    it('refuses a session signed out on A at B from the very next request', async () => {
      const p = await a.principal();
      const onA = new Browser(a);
      await onA.seedSession(p.id);
      const onB = new Browser(b);
      onB.cookie = onA.cookie;
      const chatOnB = () => onB.post('api', '/v1/chat/completions', body());
      expect((await chatOnB()).status).to.equal(200);
      expect((await chatOnB()).status).to.equal(200);
      const ended = await onA.post('api', '/v1/session/end');
      expect(ended.body).to.deep.equal({ ended: true });
      // A's answer cleared A's cookie; B's browser still sends its copy.
      const next = await chatOnB();
      expect(next.status).to.equal(401);
      expect(next.body.error.code).to.equal('session-ended');
    });

    it("still refuses a token revoked while B's tracking connections were killed (CLIENT KILL): never a 200 from a stale cache", async () => {
      const p = await a.principal();
      expect(await warm(p.token)).to.equal(200);
      expect(await killTrackingConnections(redis!.ports)).to.be.at.least(1);
      expect((await a.admin('POST', `/tokens/${p.tokenId}/revoke`)).status).to.equal(200);
      // Until B's tracking connection is back its calls fail closed (503); then the token is refused.
      const answers: number[] = [];
      const refused = await until(
        async () => {
          const res = await b.chat(p.token, body());
          answers.push(res.status);
          return res.status === 503 ? null : res;
        },
        { what: 'gateway B to answer again after its tracking connection was killed' },
      );
      expect(
        answers.filter((s) => s !== 503 && s !== 401),
        'answers after the kill',
      ).to.deep.equal([]);
      expect(refused.status).to.equal(401);
      expect(refused.body.error.code).to.equal('token-revoked');
    });

    if (backend === 'one primary') {
      it("costs B no identity command on a token's second call: only the fence, per MONITOR", async () => {
        const p = await a.principal();
        await b.chat(p.token, body());
        const sent = await commandsDuring(redis!.server!.url, async () => {
          expect((await b.chat(p.token, body())).status).to.equal(200);
        });
        // The background load runs meanwhile, its tokens cached too: nothing anywhere reads an identity key.
        expect(
          sent.filter((l) => /"evalsha_ro"|"pc:(th|t|p|ps|po|legacy-revoked)[:"]/i.test(l)),
          'identity reads during the second call',
        ).to.deep.equal([]);
        expect(sent.filter((l) => /"ping"$/i.test(l)).length, 'fences').to.be.at.least(1);
      });
    }
  });
}
