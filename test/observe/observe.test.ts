/**
 * Seeing a gateway: every answer carries a request id; each request is one info line
 * (method, route, status, duration, request id, principal hash) and the whole run's log holds none of the
 * tokens or prompts it was given; `/healthz` and `/readyz` answer on every listener, readiness failing when
 * the store cannot be reached; `GET /metrics` on the admin listener carries the series the issue lists, with
 * no principal, token or id in any label.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { secretSamples } from '../guard/helpers/secrets.js';
import { createLogger } from '../../src/log.js';
import { principalHash } from '../../src/http/request-context.js';

const OPENAI_KEY = secretSamples().find((s) => s.name === 'openai project')!.value;

describe('observability: request ids, request logs, health and metrics', function () {
  this.timeout(60_000);
  let w: World;
  const lines: string[] = [];
  const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

  before(async () => {
    w = await startWorld({ log: createLogger('debug', (l) => lines.push(l)) });
  });
  after(() => w.stop());

  it('returns a request id on every answer, keeping a well-formed one the caller sent', async () => {
    const fresh = await fetch(`${w.gw.apiUrl}/v1/models`);
    expect(fresh.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const given = await fetch(`${w.gw.apiUrl}/v1/models`, { headers: { 'x-request-id': 'lb-7f3a9c2e-0001' } });
    expect(given.headers.get('x-request-id')).to.equal('lb-7f3a9c2e-0001');
    const junk = await fetch(`${w.gw.apiUrl}/v1/models`, { headers: { 'x-request-id': 'has spaces and {json}' } });
    expect(junk.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
    const admin = await fetch(`${w.gw.adminUrl}/admin/runtime`);
    expect(admin.status).to.equal(401);
    expect(admin.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
  });

  it('logs each request once at info: method, route pattern, status, duration, request id, principal hash', async () => {
    const p = await w.gw.principal();
    lines.length = 0;
    const res = await w.gw.chat(p.token, { model: 'shared-general-a', messages: [{ role: 'user', content: 'one line please' }] });
    expect(res.status).to.equal(200);
    const receipt = await fetch(`${w.gw.apiUrl}/v1/receipts/${res.body.receiptId}`, { headers: { authorization: `Bearer ${p.token}` } });
    expect(receipt.status).to.equal(200);
    const requests = logged().filter((l) => l['event'] === 'http.request');
    expect(requests).to.have.length(2);
    expect(requests[0]).to.include({
      level: 'info',
      listener: 'api',
      method: 'POST',
      route: '/v1/chat/completions',
      status: 200,
      requestId: res.headers.get('x-request-id'),
      principal: principalHash(p.id),
    });
    expect(requests[0]!['durationMs']).to.be.a('number');
    expect(requests[0]!['t']).to.be.a('string');
    // The route pattern, never the path with its id.
    expect(requests[1]).to.include({ route: '/v1/receipts/:id', status: 200 });
    expect(JSON.stringify(requests)).not.to.contain(res.body.receiptId);
  });

  it('keeps every token and prompt of a run out of its log', async () => {
    const p = await w.gw.principal();
    lines.length = 0;
    const prompt = `please review this config: apiKey=${OPENAI_KEY} and the phrase zebra-quartz-umbrella`;
    const secretSystem = 'system text marigold-obsidian-fjord';
    await w.gw.chat(p.token, {
      model: 'shared-general-a',
      messages: [
        { role: 'system', content: secretSystem },
        { role: 'user', content: prompt },
      ],
    });
    await w.gw.chat(p.token, { model: 'shared-general-a', stream: true, messages: [{ role: 'user', content: prompt }] });
    await w.gw.chat('pcl_pat_notarealtokenbutlookslikeone0000000000', { model: 'shared-general-a', messages: [{ role: 'user', content: prompt }] });
    await w.gw.chat(p.token, '{"model": "shared-general-a", "messages": [ broken zebra-quartz-umbrella');
    await w.upstream.behave({ mode: 'status', status: 500 });
    await w.gw.chat(p.token, { model: 'shared-general-a', messages: [{ role: 'user', content: `${prompt} again` }] });
    await w.upstream.reset();
    await fetch(`${w.gw.adminUrl}/admin/runtime`, { headers: { authorization: 'Bearer wrong-operator-token-value' } });
    await fetch(`${w.gw.adminUrl}/admin/runtime`, { headers: { authorization: `Bearer ${w.gw.adminToken}` } });
    const all = lines.join('');
    expect(lines.length).to.be.greaterThan(5);
    for (const secret of [
      p.token,
      OPENAI_KEY,
      'zebra-quartz-umbrella',
      'marigold-obsidian-fjord',
      'pcl_pat_notarealtoken',
      'wrong-operator-token-value',
      w.gw.adminToken,
    ]) {
      expect(all, secret.slice(0, 12)).not.to.contain(secret);
    }
  });

  it('answers /healthz and /readyz on every listener, before any token check', async () => {
    for (const [name, url] of Object.entries(w.gw.urls)) {
      const alive = await fetch(`${url}/healthz`);
      expect(alive.status, name).to.equal(200);
      expect(await alive.json()).to.deep.equal({ status: 'alive' });
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status, name).to.equal(200);
      expect(await ready.json()).to.deep.equal({ status: 'ready', checks: { runtime: true, policy: true, store: true, serving: true } });
    }
  });

  it('serves Prometheus metrics on the admin listener only, with the series of the issue and no ids in labels', async () => {
    const p = await w.gw.principal();
    await w.gw.chat(p.token, { model: 'shared-general-a', messages: [{ role: 'user', content: `metrics with a key ${OPENAI_KEY}` }] });
    await w.gw.chat(p.token, { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] });
    expect((await fetch(`${w.gw.apiUrl}/metrics`)).status).to.equal(404);
    const res = await fetch(`${w.gw.adminUrl}/metrics`, { headers: { authorization: `Bearer ${w.gw.adminToken}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.contain('text/plain');
    const text = await res.text();
    for (const series of [
      'portcullis_http_requests_total{host="api",route="/v1/chat/completions",status="200",code=""}',
      'portcullis_admission_total{decision="admitted"}',
      'portcullis_admission_total{decision="model-not-found"}',
      'portcullis_stage_duration_seconds_bucket{le="0.001",stage="identify"}',
      'portcullis_stage_duration_seconds_count{stage="admit"}',
      'portcullis_upstream_duration_seconds_count{route="shared"}',
      'portcullis_upstream_errors_total{route="shared",code="upstream-error"}',
      'portcullis_tokens_total{model="shared-general-a",billing="free",kind="completion"}',
      'portcullis_charged_micro_usd_total{model="shared-general-a",billing="free"}',
      'portcullis_jobs_finished_total{state="succeeded"}',
      'portcullis_jobs_running',
      'portcullis_store_ping_seconds_count',
      'portcullis_guardrail_actions_total{rule="secret-hygiene",action="redact"}',
      'portcullis_nodejs_eventloop_lag_seconds',
      'portcullis_nodejs_heap_size_used_bytes',
    ]) {
      expect(text, series).to.contain(series);
    }
    expect(text).not.to.contain(p.id);
    expect(text).not.to.contain(p.token);
    expect(text).not.to.contain('did:web');
  });

  it('reports not ready, naming the store, while the store cannot be reached', async () => {
    await w.redis.stop();
    const res = await fetch(`${w.gw.apiUrl}/readyz`);
    expect(res.status).to.equal(503);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).to.equal('not-ready');
    expect(body.error.message).to.contain('failed: store');
    expect((await fetch(`${w.gw.apiUrl}/healthz`)).status).to.equal(200);
  });
});
