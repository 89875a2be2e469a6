/**
 * An origin that is still starting: its port refuses connections for a while, then it listens. A call
 * retries the refused connection with backoff for the route's cold-start budget (`routes.<name>.coldStartMs`,
 * 3 minutes by default) and is answered once the origin is up — one upstream call, as if it had been up all
 * along; past the budget it is 502 `upstream-unavailable`. A budget that does not fit inside the synchronous
 * wait is a configuration error. On the Redis store and on the memory store.
 */
import { expect } from 'chai';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { configRoot, editFile, startTestGateway } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';

const body = { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'are you up yet?' }] };

/** A config root whose `shared` route has the given cold-start budget. */
function rootWithColdStart(ms: number): string {
  const root = configRoot();
  editFile(root, 'config/gateway.yaml', (t) =>
    t.replace('  shared:\n    origin: { demo: true }\n', `  shared:\n    origin: { demo: true }\n    coldStartMs: ${ms}\n`),
  );
  return root;
}

for (const kind of ['redis', 'memory'] as const) {
  describe(`a route's cold-start budget (${kind} store)`, () => {
    let redis: RedisServer | undefined;
    before(async () => {
      if (kind === 'redis') redis = await startRedisServer();
    });
    after(async () => {
      await redis?.stop();
    });
    const store = () => (redis ? { redisUrl: redis.url } : {});

    it('waits for an origin that starts listening 2 s after the call came, within the default budget', async () => {
      const port = await freePort();
      const gw = await startTestGateway({ upstreamUrl: `http://127.0.0.1:${port}/v1`, ...store() });
      const starting = startRecordingUpstream({ port, listenAfterMs: 2000 });
      try {
        const p = await gw.principal();
        const res = await gw.chat(p.token, body);
        expect(res.status).to.equal(200);
        expect(res.body.choices[0].message.content).to.be.a('string');
        expect(await (await starting).requests()).to.have.length(1);
      } finally {
        await gw.close();
        await (await starting).stop();
      }
    });

    it('answers 502 upstream-unavailable once the budget is spent, having sent nothing', async () => {
      const port = await freePort();
      const gw = await startTestGateway({ root: rootWithColdStart(400), upstreamUrl: `http://127.0.0.1:${port}/v1`, ...store() });
      try {
        const p = await gw.principal();
        const res = await gw.chat(p.token, body);
        expect(res.status).to.equal(502);
        expect(res.body.error.code).to.equal('upstream-unavailable');
      } finally {
        await gw.close();
      }
    });
  });
}

describe('routes.<name>.coldStartMs in the configuration', () => {
  it('refuses a budget that does not fit inside the synchronous wait', async () => {
    let failure: Error | undefined;
    try {
      const gw = await startTestGateway({ root: rootWithColdStart(840_000) });
      await gw.close();
    } catch (err) {
      failure = err as Error;
    }
    expect(failure?.message).to.include('/routes/shared/coldStartMs (840000) must be below timeouts.syncWaitMs (840000)');
  });
});
