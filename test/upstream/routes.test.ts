/**
 * Routes like a gateway's: several origins per route with weights, failover to the next origin when one
 * did not run the call, passive ejection of an origin that keeps failing, active health checks, per-route
 * timeouts and a fallback model — each visible on the receipt (which origin answered, which fallback) and in
 * /metrics. Real upstream processes over HTTP; a dead origin is a port nothing listens on.
 */
import { expect } from 'chai';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { freePort } from '../helpers/ports.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';

const ask = { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] };

/** The shared route of config/gateway.yaml replaced by `yaml` (indented as a route's body). */
function withSharedRoute(root: string, yaml: string): void {
  editFile(root, 'config/gateway.yaml', (t) => t.replace(/ {2}shared:\n {4}origin: \{ demo: true \}\n/, `  shared:\n${yaml}`));
}

async function metric(gw: TestGateway, name: string, labels: string[]): Promise<number> {
  const text = await (await fetch(`${gw.adminUrl}/metrics`, { headers: { authorization: `Bearer ${gw.adminToken}` } })).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && labels.every((x) => l.includes(x)))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('routes: several origins, failover, health, per-route timeouts, fallback', function () {
  this.timeout(120_000);
  let live: RecordingUpstream;
  let sick: RecordingUpstream;
  let dead: string;

  before(async () => {
    [live, sick] = await Promise.all([startRecordingUpstream(), startRecordingUpstream()]);
    dead = `http://127.0.0.1:${await freePort()}/v1`;
  });
  after(() => Promise.all([live?.stop(), sick?.stop()]));
  beforeEach(() => Promise.all([live.reset(), sick.reset()]));

  it('fails over from a dead origin to the next, ejects the dead one, and names the origin on the receipt', async () => {
    const root = configRoot();
    withSharedRoute(
      root,
      `    origins:\n      - { name: dead, baseUrl: "${dead}", weight: 1000 }\n      - { name: live, baseUrl: "${live.baseUrl}", weight: 1 }\n    ejection: { consecutiveFailures: 2, ejectMs: 600000 }\n`,
    );
    const gw = await startTestGateway({ root });
    try {
      const failoversBefore = await metric(gw, 'portcullis_upstream_failovers_total', ['route="shared"', 'origin="dead"']);
      const p = await gw.principal();
      for (let i = 0; i < 6; i++) {
        const res = await gw.chat(p.token, { ...ask, messages: [{ role: 'user', content: `hello ${i}` }] });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        const receipt = await gw.admin('GET', `/receipts/${res.body.receiptId}`);
        expect(receipt.body.upstream.origin).to.equal('shared/live');
      }
      expect(await live.requests()).to.have.length(6);
      // Weighted 1000:1 the dead origin is tried first until it has failed twice in a row, then left out.
      expect((await metric(gw, 'portcullis_upstream_failovers_total', ['route="shared"', 'origin="dead"'])) - failoversBefore).to.equal(2);
      expect(await metric(gw, 'portcullis_upstream_origin_up', ['route="shared"', 'origin="dead"'])).to.equal(0);
      expect(await metric(gw, 'portcullis_upstream_origin_up', ['route="shared"', 'origin="live"'])).to.equal(1);
      expect(await metric(gw, 'portcullis_upstream_answers_total', ['route="shared"', 'origin="live"'])).to.be.at.least(6);
    } finally {
      await gw.close();
    }
  });

  it('leaves out an origin that fails its active health check, so no call is sent to it', async () => {
    await sick.behave({ mode: 'status', status: 503 });
    const root = configRoot();
    // The check's own deadline no busy machine reaches: one check of the live origin timing out would leave
    // no origin up, and the route would then try them all, the sick one (weighted 1000:1) first.
    withSharedRoute(
      root,
      `    origins:\n      - { name: sick, baseUrl: "${sick.baseUrl}", weight: 1000 }\n      - { name: live, baseUrl: "${live.baseUrl}" }\n    healthCheck: { path: /models, intervalMs: 100, timeoutMs: 10000 }\n`,
    );
    const gw = await startTestGateway({ root });
    try {
      await until('the sick origin marked down', async () => (await metric(gw, 'portcullis_upstream_origin_up', ['route="shared"', 'origin="sick"'])) === 0);
      const p = await gw.principal();
      for (let i = 0; i < 3; i++) expect((await gw.chat(p.token, { ...ask, messages: [{ role: 'user', content: `health ${i}` }] })).status).to.equal(200);
      expect((await sick.requests()).filter((r) => r.method === 'POST')).to.have.length(0);
      expect(await live.requests()).to.have.length(3);
    } finally {
      await gw.close();
    }
  });

  it("applies a route's own timeout", async () => {
    await live.behave({ mode: 'echo', delayMs: 1500 });
    const root = configRoot();
    withSharedRoute(root, `    origin: { baseUrl: "${live.baseUrl}" }\n    timeouts: { headersMs: 300 }\n`);
    const gw = await startTestGateway({ root });
    try {
      const p = await gw.principal();
      const res = await gw.chat(p.token, ask);
      expect(res.status).to.equal(504);
      expect(res.body.error.code).to.equal('upstream-timeout');
    } finally {
      await gw.close();
    }
  });

  it('answers from the fallback model on another route when every origin of the route fails', async () => {
    const root = configRoot();
    // shared-general-b moves to a route of its own, the fallback of shared-general-a.
    editFile(root, 'catalog/models.yaml', (t) => t.replace(/(id: shared-general-b\n\s+team: blue\n\s+route: )shared/, '$1backup'));
    withSharedRoute(root, `    origin: { baseUrl: "${dead}" }\n`);
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('      shared-general-a: {}\n      shared-general-b: {}\n', '      shared-general-a: { fallbackModel: shared-general-b }\n')
        .replace(/^routes:\n/m, `routes:\n  backup:\n    origin: { baseUrl: "${live.baseUrl}" }\n    models:\n      shared-general-b: {}\n`),
    );
    const gw = await startTestGateway({ root });
    try {
      const p = await gw.principal();
      const res = await gw.chat(p.token, ask);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const [sent] = await live.requests();
      expect(sent!.body['model']).to.equal('shared-general-b');
      const receipt = await gw.admin('GET', `/receipts/${res.body.receiptId}`);
      expect(receipt.body.upstream).to.include({ origin: 'backup/origin-1', fallbackModel: 'shared-general-b', model: 'shared-general-b' });
      expect(await metric(gw, 'portcullis_upstream_fallbacks_total', ['model="shared-general-a"', 'fallback="shared-general-b"'])).to.be.at.least(1);
    } finally {
      await gw.close();
    }
  });

  it('sends the fallback model only calls its own catalog entry admits (limits and tasks); others fail as the primary did', async () => {
    const root = configRoot();
    editFile(root, 'catalog/models.yaml', (t) =>
      t.replace(
        /(id: shared-general-b\n\s+team: blue\n\s+route: )shared\n(\s+)tasks: \[[^\]]*\]\n(\s+echo: strict\n\s+)limits: \{[^}]*\}/,
        '$1backup\n$2tasks: [code-review]\n$3limits: { inputChars: 2000, outputTokens: 8, tools: 0, turns: 2 }',
      ),
    );
    // The primary answers 503 (an origin that did not run the call): the case for a fallback.
    await sick.behave({ mode: 'status', status: 503 });
    withSharedRoute(root, `    origin: { baseUrl: "${sick.baseUrl}" }\n`);
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('      shared-general-a: {}\n      shared-general-b: {}\n', '      shared-general-a: { fallbackModel: shared-general-b }\n')
        .replace(/^routes:\n/m, `routes:\n  backup:\n    origin: { baseUrl: "${live.baseUrl}" }\n    models:\n      shared-general-b: {}\n`),
    );
    const gw = await startTestGateway({ root });
    try {
      const p = await gw.principal();
      const hello = { role: 'user', content: 'hello' };
      const beyond = [
        { ...ask, task: 'code-review', max_tokens: 16 },
        { ...ask, task: 'remediation', max_tokens: 8 },
        { ...ask, task: 'code-review', max_tokens: 8, messages: [hello, { role: 'assistant', content: 'hi' }, hello] },
        { ...ask, task: 'code-review', max_tokens: 8, messages: [{ role: 'user', content: 'x'.repeat(2500) }] },
      ];
      for (const body of beyond) {
        const res = await gw.chat(p.token, body);
        expect(res.status, JSON.stringify(res.body)).to.not.equal(200);
        expect(res.body.error.code).to.be.a('string');
      }
      expect(await live.requests(), 'the fallback origin was sent nothing its catalog entry refuses').to.have.length(0);
      const within = await gw.chat(p.token, { ...ask, task: 'code-review', max_tokens: 8 });
      expect(within.status, JSON.stringify(within.body)).to.equal(200);
      expect(await live.requests()).to.have.length(1);
    } finally {
      await gw.close();
    }
  });

  it('refuses a fallback of another team or on the same route, naming the file and path', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) => t.replace('      shared-general-a: {}\n', '      shared-general-a: { fallbackModel: red-whitehacker-a }\n'));
    let error: unknown;
    try {
      await startTestGateway({ root });
    } catch (err) {
      error = err;
    }
    expect(String((error as { problems?: string[] })?.problems)).to.include(
      '/routes/shared/models/shared-general-a/fallbackModel names "red-whitehacker-a", a model of another team',
    );
  });
});
