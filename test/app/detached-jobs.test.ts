/**
 * A job belongs to its principal, not to the connection that made it, on the Redis store and on the memory
 * store: a client that goes away while it waits (a plain chat call, a streamed one) cancels nothing. The job
 * runs to its end against a slow upstream, is settled once, and the identical request then answers its
 * result from the job — exactly one upstream call, one charge, one receipt.
 */
import { expect } from 'chai';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { smallLimitsRoot } from '../helpers/billing.js';
import { jobIdFor } from '../../src/jobs/job.js';
import { until } from '../helpers/wait.js';

for (const kind of ['redis', 'memory'] as const) {
  describe(`jobs outlive their caller (${kind} store)`, () => {
    let redis: RedisServer | undefined;
    let upstream: RecordingUpstream;
    let gw: TestGateway;
    const day = () => new Date().toISOString().slice(0, 10);
    const ai = async (token: string) => {
      const res = await fetch(`${gw.apiUrl}/v1/billing/status`, { headers: { authorization: `Bearer ${token}` } });
      return ((await res.json()) as any).balances[0] as Record<string, number>;
    };
    const receipts = async (id: string) => (await gw.admin('GET', `/principals/${encodeURIComponent(id)}/receipts?day=${day()}`)).body.data as any[];

    before(async () => {
      upstream = await startRecordingUpstream();
      if (kind === 'redis') redis = await startRedisServer();
      // No free allowance: every call is paid, so a second upstream call would be a second charge.
      gw = await startTestGateway({ root: smallLimitsRoot(0), upstreamUrl: upstream.baseUrl, ...(redis ? { redisUrl: redis.url } : {}) });
    });
    after(async () => {
      await gw.close();
      await upstream.stop();
      await redis?.stop();
    });
    beforeEach(() => upstream.reset());

    for (const stream of [false, true]) {
      it(`a ${stream ? 'streaming ' : ''}client that disconnects leaves its job running; the identical request gets its result: one upstream call, one charge`, async () => {
        const p = await gw.principal();
        await gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 1_000_000 });
        await upstream.behave({ mode: 'echo', delayMs: 1500, content: 'finished without you', usage: { prompt_tokens: 100, completion_tokens: 20 } });
        const body = { model: 'shared-general-a', max_tokens: 64, stream, messages: [{ role: 'user', content: `long work ${stream}` }] };
        const ac = new AbortController();
        const pending = fetch(`${gw.apiUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}` },
          body: JSON.stringify(body),
          signal: ac.signal,
        })
          .then((r) => r.text())
          .catch((e: Error) => e);
        // The client goes away once the upstream has the call.
        await until(async () => (await upstream.requests()).length > 0, { what: 'the upstream call' });
        ac.abort();
        expect(await pending).to.be.instanceOf(Error);

        // The job runs on and settles: 100 x 0.9 + 20 x 4.5 = 180 micro-USD.
        const spent = await until(async () => (await ai(p.token))['spentMicroUSD'], { what: 'the detached job to settle' });
        expect(spent).to.equal(180);
        const recorded = await upstream.requests();
        expect(recorded).to.have.length(1);
        expect(recorded[0]!.aborted ?? false).to.equal(false);

        const again = await gw.chat(p.token, body);
        expect(again.status).to.equal(200);
        expect(typeof again.body === 'string' ? again.body : again.body.choices[0].message.content).to.include('finished without you');
        expect(await upstream.requests()).to.have.length(1);
        expect(await ai(p.token)).to.include({ spentMicroUSD: 180, reservedMicroUSD: 0 });
        const mine = await receipts(p.id);
        expect(mine.map((r) => [r.outcome, r.chargedMicroUSD])).to.deep.equal([['answered', 180]]);

        // The job route has it too, under the request's deterministic id (the default task, no scope).
        const jobId = jobIdFor(p.id, { model: body.model, task: 'code-review', scopeId: null, max_tokens: body.max_tokens, messages: body.messages });
        const polled = await fetch(`${gw.apiUrl}/v1/research/job?jobId=${jobId}`, { headers: { authorization: `Bearer ${p.token}` } });
        expect(polled.status).to.equal(200);
        expect(await polled.json()).to.include({ jobId, status: 'succeeded', content: 'finished without you', billing: 'paid' });
      });
    }
  });
}
