/**
 * The job API for a principal that has only signed in, on the Redis store and on the memory store: a
 * blue-team model needs no scope, so `scopeId` may be left out (null and "" mean the same) and the job is
 * admitted as the chat path admits the call; a red-team model needs one, so leaving it out is a 400 naming
 * the field, and a named scope is checked on every team.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

for (const kind of ['redis', 'memory'] as const) {
  describe(`blue-team jobs without a scope (${kind} store)`, () => {
    let redis: RedisServer | undefined;
    let upstream: RecordingUpstream;
    let gw: TestGateway;

    const submit = async (token: string, body: unknown, key = randomUUID()) => {
      const res = await fetch(`${gw.apiUrl}/v1/research/jobs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': key },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const poll = async (token: string, jobId: string) => {
      const res = await fetch(`${gw.apiUrl}/v1/research/job?jobId=${jobId}`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const finished = async (token: string, jobId: string) => {
      for (let i = 0; i < 200; i++) {
        const r = await poll(token, jobId);
        if (r.status === 200) return r;
        await sleep(r.body.pollAfterMs ? Math.min(r.body.pollAfterMs, 50) : 50);
      }
      throw new Error('the job never ended');
    };

    before(async () => {
      upstream = await startRecordingUpstream();
      if (kind === 'redis') redis = await startRedisServer();
      gw = await startTestGateway({ upstreamUrl: upstream.baseUrl, ...(redis ? { redisUrl: redis.url } : {}) });
    });
    after(async () => {
      await gw.close();
      await upstream.stop();
      await redis?.stop();
    });
    beforeEach(() => upstream.reset());

    it('admits a signed-in principal with no scope on a blue-team model, and runs the job to its answer', async () => {
      const p = await gw.principal(); // no rung, no scope: only signed in
      await upstream.behave({ mode: 'echo', content: 'blue answer' });
      const body = { model: 'shared-general-a', task: 'code-review', max_tokens: 64, messages: [{ role: 'user', content: 'review this' }] };
      const queued = await submit(p.token, body);
      expect(queued.status).to.equal(202);
      expect(queued.body).to.include({ status: 'queued', billing: 'free', model: 'shared-general-a' });
      const done = await finished(p.token, queued.body.jobId);
      expect(done.body).to.include({ jobId: queued.body.jobId, status: 'succeeded', content: 'blue answer', finishReason: 'stop' });
      // The job object keeps its shape when terminal: pollAfterMs (jobs.pollAfterMs) included.
      expect(done.body).to.include({ pollAfterMs: 1000 });

      // null and "" mean no scope, as leaving it out does: the identical request, the same job, no second call.
      for (const scopeId of [null, '']) {
        const again = await submit(p.token, { ...body, scopeId });
        expect(again.status).to.equal(202);
        expect(again.body).to.include({ jobId: queued.body.jobId, status: 'succeeded' });
      }
      expect(await upstream.requests()).to.have.length(1);
    });

    it('still checks a scope a blue-team job names: one the principal does not hold is 403 scope-not-approved', async () => {
      const p = await gw.principal();
      const res = await submit(p.token, {
        model: 'shared-general-a',
        task: 'code-review',
        scopeId: 'owned',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('scope-not-approved');
      expect(await upstream.requests()).to.have.length(0);
    });

    it('requires scopeId on a red-team model (400, param scopeId), and admits it named as before', async () => {
      const p = await gw.principal({ rung: 'card' });
      const red = { model: 'red-whitehacker-a', task: 'code-review', max_tokens: 64, messages: [{ role: 'user', content: 'red review' }] };
      for (const scopeId of [undefined, null, '']) {
        const res = await submit(p.token, scopeId === undefined ? red : { ...red, scopeId });
        expect(res.status).to.equal(400);
        expect(res.body.error).to.include({ code: 'invalid-request', param: 'scopeId' });
        expect(res.body.error.message).to.include('scopeId is required for model red-whitehacker-a');
      }
      const named = await submit(p.token, { ...red, scopeId: 'owned' });
      expect(named.status).to.equal(202);
      expect((await finished(p.token, named.body.jobId)).body.status).to.equal('succeeded');
      expect(await upstream.requests()).to.have.length(1);
    });
  });
}
