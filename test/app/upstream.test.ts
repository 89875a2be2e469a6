/**
 * What the gateway does when the upstream misbehaves: every failure has its code, the answer never carries
 * the upstream's body (which may echo the prompt or a key), a wrong echoed model is refused and recorded on
 * the receipt, and the key named by apiKeyEnv is sent as the bearer. (A client that goes away cancels
 * nothing: test/app/detached-jobs.test.ts.)
 */
import { expect } from 'chai';
import { allReceipts, startWorld, type World } from '../helpers/world.js';
import { startRecordingUpstream } from '../helpers/upstream.js';
import { configRoot, editFile, startTestGateway } from '../helpers/gateway.js';

describe('forwarding to the upstream', () => {
  let w: World;
  let token: string;
  const body = { model: 'shared-general-a', max_tokens: 2048, messages: [{ role: 'user', content: 'hi' }] };

  before(async () => {
    const root = configRoot();
    // Short upstream timeouts so a slow upstream is seen within a test.
    editFile(root, 'config/gateway.yaml', (t) => t.replace('upstreamHeadersMs: 840000', 'upstreamHeadersMs: 500'));
    w = await startWorld({ root });
    token = (await w.gw.principal()).token;
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  for (const [behaviour, status, code] of [
    [{ mode: 'status', status: 500 }, 502, 'upstream-error'],
    [{ mode: 'status', status: 429 }, 502, 'upstream-error'],
    [{ mode: 'malformed' }, 502, 'upstream-error'],
    [{ mode: 'drop' }, 502, 'upstream-unavailable'],
    [{ mode: 'echo', delayMs: 1500 }, 504, 'upstream-timeout'],
    [{ mode: 'wrong-model', model: 'cheaper-model' }, 502, 'upstream-model-mismatch'],
  ] as const) {
    it(`answers ${status} ${code} when the upstream ${JSON.stringify(behaviour)}`, async () => {
      await w.upstream.behave(behaviour);
      const res = await w.gw.chat(token, body);
      expect(res.status).to.equal(status);
      expect(res.body.error.code).to.equal(code);
      expect(JSON.stringify(res.body)).not.to.contain('sk-should-not-leak');
    });
  }

  it('records an echo mismatch on the receipt and charges nothing', async () => {
    await w.upstream.behave({ mode: 'wrong-model', model: 'cheaper-model' });
    const p = await w.gw.principal();
    const res = await w.gw.chat(p.token, body);
    expect(res.body.error.code).to.equal('upstream-model-mismatch');
    const [receipt] = (await allReceipts(w)).filter((r) => r['principalId'] === p.id);
    const r = await w.gw.admin('GET', `/receipts/${receipt!['id']}`);
    expect(r.body).to.deep.include({ outcome: 'failed', error: { code: 'upstream-model-mismatch' }, chargedMicroUSD: 0 });
    expect(r.body.upstream).to.deep.equal({ model: 'shared-general-a', echoedModel: 'cheaper-model', origin: 'shared/origin-1' });
  });

  it('accepts a different but well-formed model id under the shape-and-content echo rule', async () => {
    const up = await startRecordingUpstream();
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace(
        'red-whitehacker-a: { upstreamModel: whitehacker-a-flash-next-cybersecurity-nvfp4 }',
        'red-whitehacker-a: { upstreamModel: whitehacker-a-flash-next-cybersecurity-nvfp4 }\n      red-whitehacker-b: {}',
      ),
    );
    const gw = await startTestGateway({ root, upstreamUrl: up.baseUrl, redisUrl: w.redis.url });
    try {
      const p = await gw.principal({ rung: 'card' });
      await up.behave({ mode: 'wrong-model', model: 'whitehacker-b-2026-11' });
      const res = await gw.chat(p.token, { ...body, model: 'red-whitehacker-b' });
      expect(res.status).to.equal(200);
      expect(res.body.model).to.equal('whitehacker-b-2026-11');
      await up.behave({ mode: 'wrong-model', model: 'whitehacker-b-2026-11', content: '' });
      const empty = await gw.chat(p.token, { ...body, model: 'red-whitehacker-b', messages: [{ role: 'user', content: 'another question' }] });
      expect(empty.body.error.code).to.equal('upstream-model-mismatch');
    } finally {
      await gw.close();
      await up.stop();
    }
  });

  it('sends the key from the environment variable the YAML names, and nothing when none is named', async () => {
    const up = await startRecordingUpstream();
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace('shared:\n    origin: { demo: true }', `shared:\n    origin: { baseUrl: "${up.baseUrl}", apiKeyEnv: SHARED_UPSTREAM_KEY }`),
    );
    const gw = await startTestGateway({
      root,
      redisUrl: w.redis.url,
      env: { SHARED_UPSTREAM_KEY: 'upstream-secret-123', PORTCULLIS_ROUTE_DEDICATED_URL: up.baseUrl },
    });
    try {
      const p = await gw.principal({ rung: 'card' });
      expect((await gw.chat(p.token, body)).status).to.equal(200);
      expect((await gw.chat(p.token, { ...body, model: 'red-whitehacker-a' })).status).to.equal(200);
      const [shared, dedicated] = await up.requests();
      expect(shared!.headers['authorization']).to.equal('Bearer upstream-secret-123');
      expect(dedicated!.headers['authorization']).to.equal(undefined);
      // The client's own token is never passed upstream.
      expect(JSON.stringify(await up.requests())).not.to.contain(p.token);
    } finally {
      await gw.close();
      await up.stop();
    }
  });
});
