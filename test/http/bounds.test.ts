/**
 * Listener bounds: a stalled body,
 * a slowloris head, an oversized head, bytes that are not HTTP and a connection past the cap are each cut
 * and answered `{error:{code,message}}` where an answer can be written; the request timeout does not cut
 * a long synchronous wait; a client that drops or misbehaves costs one JSON log line at debug level, through
 * a budget, never a stack trace on stderr.
 */
import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { parseRaw, rawConnect } from '../helpers/raw-http.js';
import { createLogger } from '../../src/log.js';
import { until } from '../helpers/wait.js';

const CHAT = { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] };

describe('listener bounds', function () {
  this.timeout(30_000);
  let up: RecordingUpstream;
  let gw: TestGateway;
  let token: string;
  const lines: string[] = [];

  before(async () => {
    up = await startRecordingUpstream();
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('headersTimeoutMs: 10000', 'headersTimeoutMs: 1000')
        .replace('requestTimeoutMs: 60000', 'requestTimeoutMs: 1000')
        .replace('bodyIdleMs: 5000', 'bodyIdleMs: 400')
        .replace('maxConnections: 4096', 'maxConnections: 40'),
    );
    gw = await startTestGateway({ root, upstreamUrl: up.baseUrl, log: createLogger('debug', (l) => lines.push(l)) });
    token = (await gw.principal()).token;
  });
  after(async () => {
    await gw.close();
    await up.stop();
  });
  beforeEach(async () => {
    lines.length = 0;
    await up.reset();
  });

  // First: the log budget counts each event name per 10 s window from its first event, and the tests below spend
  // it too (a request timeout is a client error), so after them a busy machine could start the next window
  // in the middle of this test's burst and let a second budget through.
  it('answers bytes that are not HTTP 400 bad-request, logging one JSON line at debug level through a budget', async () => {
    const answers = await Promise.all(
      Array.from({ length: 25 }, async () => {
        const c = await rawConnect(gw.apiUrl);
        c.socket.write('HELLO THERE\r\n\r\n');
        return parseRaw(await c.closed);
      }),
    );
    for (const a of answers) expect(a).to.deep.equal({ status: 400, body: { error: { code: 'bad-request', message: 'the request is not valid HTTP' } } });
    const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['event'] === 'http.client_error');
    expect(logged.length).to.be.at.least(1).and.at.most(10);
    expect(logged[0]).to.include({ level: 'debug', listener: 'api', code: 'bad-request' });
  });

  it('cuts a request whose declared body stops arriving, answering 408 request-timeout (finding 8)', async () => {
    const c = await rawConnect(gw.apiUrl);
    c.socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${token}\r\ncontent-length: 1000\r\n\r\n{"model":`,
    );
    const answer = parseRaw(await c.closed);
    expect(answer.status).to.equal(408);
    expect(answer.body).to.deep.equal({
      error: { code: 'request-timeout', message: 'the request was not received in time; send the head and body without pauses' },
    });
    expect(await up.requests()).to.have.length(0);
  });

  it('cuts an unfinished head (408) and closes a connection whose body stalls, on every listener', async () => {
    const urls = Object.values(gw.urls);
    expect(Object.keys(gw.urls)).to.include.members(['api', 'auth', 'console', 'site', 'graph', 'admin']);
    const heads = await Promise.all(
      urls.map(async (url) => {
        const c = await rawConnect(url);
        c.socket.write('GET /anything HTTP/1.1\r\nhost: x\r\n');
        return parseRaw(await c.closed).status;
      }),
    );
    expect(heads).to.deep.equal(urls.map(() => 408));
    // A route that answers without reading the body (a 401, 403 or 404) has answered; the stalled rest is cut.
    const bodies = await Promise.all(
      urls.map(async (url) => {
        const c = await rawConnect(url);
        c.socket.write('POST /anything HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
        return parseRaw(await c.closed).status;
      }),
    );
    for (const status of bodies) expect(status).to.be.within(400, 499);
  });

  it('cuts many stalled bodies while a normal call is still answered', async () => {
    const stalled = await Promise.all(
      Array.from({ length: 30 }, async () => {
        const c = await rawConnect(gw.apiUrl);
        c.socket.write('POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5000\r\n\r\n{');
        return c;
      }),
    );
    const res = await gw.chat(token, CHAT);
    expect(res.status).to.equal(200);
    const answers = await Promise.all(stalled.map((c) => c.closed));
    expect(answers.map((a) => parseRaw(a).status)).to.deep.equal(Array(30).fill(408));
  });

  it('cuts a client that trickles its request head (slowloris), answering 408', async () => {
    const c = await rawConnect(gw.apiUrl);
    c.socket.write('GET /v1/models HTTP/1.1\r\nhost: x\r\n');
    let open = true;
    void c.closed.then(() => (open = false));
    // One header line every 150 ms: never silent for long, never done.
    for (let i = 0; open && i < 200; i++) {
      c.socket.write(`x-slow-${i}: a\r\n`);
      await sleep(150);
    }
    const answer = parseRaw(await c.closed);
    expect(answer.status).to.equal(408);
    expect(answer.body.error.code).to.equal('request-timeout');
  });

  it('does not cut a synchronous call whose answer takes longer than the request timeout', async () => {
    await up.behave({ mode: 'echo', delayMs: 2500 });
    const res = await gw.chat(token, { ...CHAT, messages: [{ role: 'user', content: 'a slow one' }] });
    expect((await up.requests()).length).to.equal(1);
    expect(res.status).to.equal(200);
    expect(res.body.choices[0].message.content).to.match(/^recorded answer/);
  });

  it('answers an oversized request head 431 headers-too-large', async () => {
    const res = await fetch(`${gw.apiUrl}/v1/models`, { headers: { authorization: `Bearer ${token}`, 'x-big': 'a'.repeat(20_000) } });
    expect(res.status).to.equal(431);
    expect(await res.json()).to.deep.equal({ error: { code: 'headers-too-large', message: 'the request head is larger than the listener accepts' } });
  });

  it('refuses connections past maxConnections, and accepts again once they close', async () => {
    // Idle connections that sent nothing: they hold slots until the head timeout cuts them.
    const held = await Promise.all(Array.from({ length: 40 }, () => rawConnect(gw.apiUrl)));
    // The kernel completes a connection before the server has taken it: once the server has taken all 40, a
    // 41st is closed unanswered.
    const extraRefused = async () => {
      const extra = await rawConnect(gw.apiUrl);
      extra.socket.write('GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n');
      return (await extra.closed) === '';
    };
    await until(extraRefused, { what: 'a connection past maxConnections to be closed unanswered' });
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    // Once the server has seen them close, it answers again.
    await until(async () => (await fetch(`${gw.apiUrl}/v1/models`, { headers: { authorization: `Bearer ${token}` } })).status === 200, {
      what: 'an answer once the held connections closed',
    });
  });

  it('logs a client that drops mid-call as one JSON line, never a stack trace on stderr (finding 11)', async () => {
    const written: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = (chunk: string | Uint8Array, ...rest: unknown[]) => {
      written.push(String(chunk));
      return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
    };
    try {
      await up.behave({ mode: 'echo', delayMs: 400 });
      for (let i = 0; i < 5; i++) {
        const c = await rawConnect(gw.apiUrl);
        const body = JSON.stringify({ ...CHAT, stream: true, messages: [{ role: 'user', content: `drop ${i}` }] });
        c.socket.write(
          `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nauthorization: Bearer ${token}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
        // Half-read: the client resets the connection while the gateway is waiting on the upstream (it has
        // the call), or while it writes the answer (its first event is here).
        let got = '';
        c.socket.on('data', (b: Buffer) => (got += b.toString('utf8')));
        if (i % 2)
          await until(async () => (await up.requests()).some((r) => JSON.stringify(r.body).includes(`drop ${i}`)), { what: `the upstream call of drop ${i}` });
        else await until(() => got.includes('\ndata: '), { what: `the first event of drop ${i}` });
        c.socket.resetAndDestroy();
        await c.closed;
      }
      // Every dropped call has ended on the gateway's side (what it logs, it has logged).
      await until(() => gw.lifecycle.inFlight === 0, { what: 'the dropped calls to end' });
    } finally {
      process.stderr.write = original;
    }
    expect(written.join('')).to.equal('');
    for (const l of lines) expect(() => JSON.parse(l), l).not.to.throw();
  });
});
