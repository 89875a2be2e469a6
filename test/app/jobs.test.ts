/**
 * Every call is a job: the job API (idempotency keys, strict body, polling), the synchronous wait ending in
 * 504 and the identical request re-attaching with exactly one upstream call and one receipt, two gateway
 * instances sharing one Redis, and a SIGKILLed instance whose job is failed cleanly by the survivor.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { allReceipts, startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { spawnGateway } from '../helpers/process.js';
import { streamBody } from '../../src/stages/respond.js';
import { until as waitUntil } from '../helpers/wait.js';
import { createLogger } from '../../src/log.js';

/**
 * A config root with short waits and leases, so timeouts and takeovers happen within a test. The lease is 3 s,
 * not less: these gateways run in the test process and renew every third of it, and a busy machine that
 * stalled one past a shorter lease would have a sweep fail a job it is still running (job-interrupted), for
 * that reason alone.
 */
function fastRoot(): string {
  const root = configRoot();
  editFile(root, 'config/gateway.yaml', (t) =>
    t
      .replace('syncWaitMs: 840000', 'syncWaitMs: 300')
      .replace('leaseMs: 15000', 'leaseMs: 3000')
      .replace('sweepEveryMs: 5000', 'sweepEveryMs: 200')
      .replace('pollAfterMs: 1000', 'pollAfterMs: 100'),
  );
  return root;
}

describe('jobs', function () {
  // A test starts a gateway process (the SIGKILLed instance), which its helper gives up to a minute (START_MS).
  this.timeout(90_000);
  let w: World;
  let p: { id: string; token: string };
  const chat = { model: 'shared-general-a', max_tokens: 256, messages: [{ role: 'user', content: 'slow one' }] };
  const job = { model: 'red-whitehacker-a', task: 'code-review', scopeId: 'owned', max_tokens: 256, messages: [{ role: 'user', content: 'review' }] };

  async function submit(gw: TestGateway, token: string, body: unknown, key: string | null = randomUUID()) {
    const res = await fetch(`${gw.apiUrl}/v1/research/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function poll(gw: { apiUrl: string }, token: string, jobId: string) {
    const res = await fetch(`${gw.apiUrl}/v1/research/job?jobId=${jobId}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as any };
  }
  async function until(gw: { apiUrl: string }, token: string, jobId: string, status: string) {
    return waitUntil(
      async () => {
        const r = await poll(gw, token, jobId);
        return r.body.status === status ? r : null;
      },
      { what: `job ${jobId} to reach ${status}` },
    );
  }

  before(async () => {
    w = await startWorld({ root: fastRoot() });
    p = await w.gw.principal({ rung: 'card' });
  });
  after(() => w.stop());
  beforeEach(() => w.upstream.reset());

  it('answers 504 inference-timeout past the wait, then re-attaches: one upstream call, one receipt', async () => {
    await w.upstream.behave({ mode: 'echo', delayMs: 700, content: 'worth the wait' });
    const first = await w.gw.chat(p.token, chat);
    expect(first.status).to.equal(504);
    expect(first.body.error.code).to.equal('inference-timeout');
    const jobId = /job ([0-9a-f-]{36})/.exec(first.body.error.message)![1]!;
    await until(w.gw, p.token, jobId, 'succeeded');
    const again = await w.gw.chat(p.token, chat);
    expect(again.status).to.equal(200);
    expect(again.body.choices[0].message.content).to.equal('worth the wait');
    const third = await w.gw.chat(p.token, { ...chat, stream: true });
    expect(third.status).to.equal(200);
    expect(await w.upstream.requests()).to.have.length(1);
    const receipts = (await allReceipts(w)).filter((r) => r['principalId'] === p.id && r['outcome'] === 'answered' && r['model'] === 'shared-general-a');
    expect(receipts).to.have.length(1);
    expect(again.body.receiptId).to.equal(receipts[0]!['id']);
    expect((await poll(w.gw, p.token, jobId)).body).to.include({ jobId, status: 'succeeded', content: 'worth the wait', finishReason: 'stop' });
  });

  it('streams exactly the bytes of the spec: one content chunk, one finish chunk, [DONE]', async () => {
    const body = { ...chat, messages: [{ role: 'user', content: 'bytes' }] };
    const streamed = await fetch(`${w.gw.apiUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}` },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(streamed.headers.get('content-type')).to.equal('text/event-stream');
    const text = await streamed.text();
    const completion = (await w.gw.chat(p.token, body)).body; // re-attaches: the same job's completion
    const c = completion;
    const base = { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model };
    const expected =
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: c.choices[0].message.content }, logprobs: null, finish_reason: null }] })}\n\n` +
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], billing: c.billing, receiptId: c.receiptId, chargedMicroUSD: c.chargedMicroUSD })}\n\n` +
      'data: [DONE]\n\n';
    expect(text).to.equal(expected);
    expect(streamBody(completion)).to.equal(expected);
  });

  it('queues a job (202), answers 202 with pollAfterMs while it runs, and 200 with the content when done', async () => {
    // Held until the test has seen it running: a job that ended on its own after a delay could pass from
    // queued to done between two polls of a busy machine, and the poll for running would never see it.
    await w.upstream.behave({ mode: 'echo', hold: true, content: 'job done' });
    const q = await submit(w.gw, p.token, job);
    expect(q.status).to.equal(202);
    expect(q.body).to.include({ status: 'queued', billing: 'free', model: 'red-whitehacker-a' });
    expect(q.body.jobId).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(q.body.receiptId).to.match(/^rcpt_/);
    expect(q.body.pollAfterMs).to.equal(100);
    const running = await until(w.gw, p.token, q.body.jobId, 'running');
    expect(running.status).to.equal(202);
    expect(running.body.pollAfterMs).to.equal(100);
    await w.upstream.release();
    const done = await until(w.gw, p.token, q.body.jobId, 'succeeded');
    expect(done.status).to.equal(200);
    expect(done.body).to.deep.include({ content: 'job done', toolCalls: null, finishReason: 'stop', receiptId: q.body.receiptId });
    expect(done.body.pollAfterMs).to.equal(100); // the same shape when terminal
  });

  it('gives the same job id for the same request, refuses a reused key with another body, and needs a key', async () => {
    const body = { ...job, messages: [{ role: 'user', content: 'idempotent' }] };
    const key = randomUUID();
    const a = await submit(w.gw, p.token, body, key);
    const b = await submit(w.gw, p.token, body, key);
    const c = await submit(w.gw, p.token, body, randomUUID());
    expect(b.body.jobId).to.equal(a.body.jobId);
    expect(c.body.jobId).to.equal(a.body.jobId);
    const reused = await submit(w.gw, p.token, { ...body, max_tokens: 512 }, key);
    expect(reused.status).to.equal(409);
    expect(reused.body.error.code).to.equal('idempotency-key-reused');
    expect((await submit(w.gw, p.token, body, null)).body.error.code).to.equal('idempotency-key-required');
    expect((await submit(w.gw, p.token, body, 'not-a-uuid')).body.error.code).to.equal('invalid-idempotency-key');
    await until(w.gw, p.token, a.body.jobId, 'succeeded');
    expect(await w.upstream.requests()).to.have.length(1);
  });

  // JSON carries a lone UTF-16 surrogate ("\ud800"), RFC 8785 does not: the job id and the idempotency
  // binding must still work (they once answered 500), and the upstream gets the text as sent.
  it('takes a lone surrogate in a message or a tool definition as the same job each time', async () => {
    const body = { ...job, messages: [{ role: 'user', content: 'half a pair: \ud800.' }] };
    const key = randomUUID();
    const a = await submit(w.gw, p.token, body, key);
    expect(a.status).to.equal(202);
    expect((await submit(w.gw, p.token, body, key)).body.jobId).to.equal(a.body.jobId);
    expect((await submit(w.gw, p.token, { ...body, messages: [{ role: 'user', content: 'half a pair: \ufffd.' }] }, key)).status).to.equal(409);
    await until(w.gw, p.token, a.body.jobId, 'succeeded');

    const tools = [{ type: 'function', function: { name: 'probe', description: 'lone \udc00 here' } }];
    const first = await w.gw.chat(p.token, { ...chat, messages: [{ role: 'user', content: 'with a tool' }], tools });
    const again = await w.gw.chat(p.token, { ...chat, messages: [{ role: 'user', content: 'with a tool' }], tools });
    expect(first.status).to.equal(200);
    expect(again.body.id).to.equal(first.body.id);
    const sent = await w.upstream.requests();
    expect(sent).to.have.length(2);
    expect((sent[0]!.body['messages'] as any)[0].content).to.equal('half a pair: \ud800.');
    expect((sent[1]!.body['tools'] as any)[0].function.description).to.equal('lone \udc00 here');
  });

  it('holds the jobs body to its strict shape and the named scope to the approved ones', async () => {
    expect((await submit(w.gw, p.token, { ...job, temperature: 1 })).body.error.code).to.equal('invalid-request');
    const { scopeId: _omit, ...noScope } = job;
    expect((await submit(w.gw, p.token, noScope)).body.error.code).to.equal('invalid-request');
    const other = await submit(w.gw, p.token, { ...job, scopeId: 'someone-elses' });
    expect(other.status).to.equal(403);
    expect(other.body.error.code).to.equal('scope-not-approved');
    expect(await w.upstream.requests()).to.have.length(0);
  });

  it("answers another principal's job, a malformed id and an unknown one as not found or invalid", async () => {
    const q = await submit(w.gw, p.token, { ...job, messages: [{ role: 'user', content: 'mine' }] });
    const stranger = await w.gw.principal();
    expect((await poll(w.gw, stranger.token, q.body.jobId)).status).to.equal(404);
    expect((await poll(w.gw, p.token, randomUUID())).body.error.code).to.equal('job-not-found');
    expect((await poll(w.gw, p.token, 'nope')).body.error.code).to.equal('invalid-job-id');
  });

  it('runs across two instances on one Redis: submit on one, poll and re-attach on the other', async () => {
    const second = await startTestGateway({ root: fastRoot(), upstreamUrl: w.upstream.baseUrl, redisUrl: w.redis.url });
    try {
      await w.upstream.behave({ mode: 'echo', delayMs: 200, content: 'shared' });
      const body = { ...job, messages: [{ role: 'user', content: 'two instances' }] };
      const q = await submit(w.gw, p.token, body);
      const done = await until(second, p.token, q.body.jobId, 'succeeded');
      expect(done.body.content).to.equal('shared');
      const again = await submit(second, p.token, body);
      expect(again.body).to.include({ jobId: q.body.jobId, status: 'succeeded' });
      // The chat path of the other instance re-attaches too (same principal, same canonical request).
      await w.upstream.behave({ mode: 'echo', delayMs: 400, content: 'chat shared' });
      const chatBody = { ...chat, messages: [{ role: 'user', content: 'chat on two' }] };
      const timedOut = await w.gw.chat(p.token, chatBody);
      expect(timedOut.status).to.equal(504);
      const chatJob = /job ([0-9a-f-]{36})/.exec(timedOut.body.error.message)![1]!;
      const attached = await second.chat(p.token, { ...chatBody });
      expect(attached.status === 200 || attached.body.error?.code === 'inference-timeout').to.equal(true);
      await until(second, p.token, chatJob, 'succeeded');
      expect((await second.chat(p.token, chatBody)).body.choices[0].message.content).to.equal('chat shared');
      expect(await w.upstream.requests()).to.have.length(2);
    } finally {
      await second.close();
    }
  });

  it('fails the job of a SIGKILLed instance cleanly, within the lease, and runs it again when resent', async () => {
    const root = fastRoot();
    const victim = await spawnGateway(root, {
      REDIS_URL: w.redis.url,
      PORTCULLIS_ROUTE_SHARED_URL: w.upstream.baseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: w.upstream.baseUrl,
      PORTCULLIS_ADMIN_TOKEN: 'x',
    });
    await w.upstream.behave({ mode: 'echo', delayMs: 5000 });
    const body = { ...job, messages: [{ role: 'user', content: 'doomed' }] };
    const res = await fetch(`${victim.apiUrl}/v1/research/jobs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}`, 'idempotency-key': randomUUID() },
      body: JSON.stringify(body),
    });
    const q = (await res.json()) as { jobId: string; receiptId: string };
    expect(res.status).to.equal(202);
    // Killed while the job runs: once the upstream has the victim's call.
    await waitUntil(async () => (await w.upstream.requests()).length > 0, { what: "the victim's upstream call" });
    victim.child.kill('SIGKILL');
    const failed = await until(w.gw, p.token, q.jobId, 'failed');
    expect(failed.status).to.equal(200);
    expect(failed.body.error.code).to.equal('job-interrupted');
    const receipt = (await allReceipts(w)).find((r) => r['id'] === q.receiptId);
    expect(receipt).to.deep.include({ outcome: 'failed', error: { code: 'job-interrupted' }, chargedMicroUSD: 0 });
    await w.upstream.behave({ mode: 'echo', content: 'second attempt' });
    const retry = await submit(w.gw, p.token, body);
    expect(retry.body.jobId).to.equal(q.jobId);
    expect((await until(w.gw, p.token, q.jobId, 'succeeded')).body.content).to.equal('second attempt');
  });
});

/**
 * Redis lost while async jobs run: their upstream answers while the store is down, so neither their
 * settlement nor their end can be written, and nobody waits on them (the callers have their 202). The
 * gateway must go on serving (such a job's failure once ended the process), and once Redis is back each job
 * is failed by a sweep with its receipt written and nothing left reserved.
 */
describe('jobs whose store goes down as they end', () => {
  let w: World;
  const lines: Array<Record<string, unknown>> = [];
  // The gateway runs in this process: a rejection nobody handles, which would end a real one, fails the test
  // (test/helpers/hooks.ts).
  before(async () => {
    w = await startWorld({ root: fastRoot(), log: createLogger('info', (l) => void lines.push(JSON.parse(l) as Record<string, unknown>)) });
  });
  after(async () => {
    await w.stop();
  });

  it('keeps the gateway serving, then fails each job with its receipt once Redis is back', async () => {
    const p = await w.gw.principal({ rung: 'card' });
    // Redis is killed once the third call reached the upstream, and must be down before the first answers: 3 s
    // leaves room for a busy machine to admit the three calls apart and to be slow to kill it.
    await w.upstream.behave({ mode: 'echo', delayMs: 3000 });
    const submitted = await Promise.all(
      [1, 2, 3].map(async (i) => {
        const res = await fetch(`${w.gw.apiUrl}/v1/research/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${p.token}`, 'idempotency-key': randomUUID() },
          body: JSON.stringify({
            model: 'red-whitehacker-a',
            task: 'code-review',
            scopeId: 'owned',
            max_tokens: 64,
            messages: [{ role: 'user', content: `cut ${i}` }],
          }),
        });
        expect(res.status).to.equal(202);
        return (await res.json()) as { jobId: string; receiptId: string };
      }),
    );
    await waitUntil(async () => (await w.upstream.requests()).length === 3, { what: 'the three upstream calls' });
    await w.redis.kill('SIGKILL');
    await waitUntil(() => lines.filter((l) => l['event'] === 'job.update.failed').length === 3, {
      what: 'the three jobs to end with the store down',
    });
    await w.redis.restart();
    for (const { jobId, receiptId } of submitted) {
      const failed = await waitUntil(
        async () => {
          const res = await fetch(`${w.gw.apiUrl}/v1/research/job?jobId=${jobId}`, { headers: { authorization: `Bearer ${p.token}` } });
          const job = (await res.json()) as { status: string; error?: { code: string } };
          return job.status === 'failed' ? job : null;
        },
        { what: `job ${jobId} failed by a sweep` },
      );
      expect(failed.error?.code).to.equal('job-interrupted');
      await waitUntil(async () => (await allReceipts(w)).some((r) => r['id'] === receiptId), { what: `the receipt of job ${jobId}` });
    }
    await w.upstream.behave({ mode: 'echo', content: 'still serving' });
    expect((await w.gw.chat(p.token, { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'after' }] })).status).to.equal(200);
  });
});
