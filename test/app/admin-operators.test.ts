/**
 * The operator plane as other gateways offer it: a configuration dump with secrets masked, principal and
 * token listings that page, and several operator tokens from config with scopes (read-only, billing,
 * full), each use logged with the operator's name and never the token. On a real redis-server, so the
 * principal listing walks Redis.
 */
import { expect } from 'chai';
import { createLogger } from '../../src/log.js';
import { cli } from '../helpers/cli.js';
import { configRoot, editFile, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const TOKENS = { PORTCULLIS_OPS_AUDITOR: 'auditor-token-0123456789', PORTCULLIS_OPS_BILLING: 'billing-token-0123456789' };

describe('admin: config dump, paged listings, scoped operator tokens', function () {
  this.timeout(60_000);
  let redis: RedisServer;
  let gw: TestGateway;
  const lines: Array<Record<string, unknown>> = [];

  const as = async (token: string, method: 'GET' | 'POST', path: string, body?: unknown) => {
    const res = await fetch(`${gw.adminUrl}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  before(async () => {
    redis = await startRedisServer();
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace(
        /^routes:\n/m,
        'admin:\n  operators:\n    - { name: auditor, tokenEnv: PORTCULLIS_OPS_AUDITOR, scope: read-only }\n    - { name: billing-desk, tokenEnv: PORTCULLIS_OPS_BILLING, scope: billing }\n\nroutes:\n',
      ),
    );
    const log = createLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    gw = await startTestGateway({
      root,
      redisUrl: redis.url,
      env: { ...TOKENS, PORTCULLIS_ROUTE_SHARED_URL: 'https://user:hunter2@models.example.com/v1?key=abc123' },
      log,
    });
  });
  after(async () => {
    await gw?.close();
    await redis?.stop();
  });

  it('dumps every configuration document as served, with credentials in URLs masked', async () => {
    const res = await gw.admin('GET', '/config');
    expect(res.status).to.equal(200);
    expect(res.body.versions).to.deep.equal(gw.holder.current.versions);
    expect(Object.keys(res.body.documents)).to.include.members(['config/gateway.yaml', 'catalog/models.yaml', 'rules/guardrails.yaml']);
    const gateway = res.body.documents['config/gateway.yaml'];
    expect(gateway.routes.shared.origin.baseUrl).to.equal('https://%5Bredacted%5D:%5Bredacted%5D@models.example.com/v1?[redacted]');
    expect(gateway.admin.operators[0]).to.deep.equal({ name: 'auditor', tokenEnv: 'PORTCULLIS_OPS_AUDITOR', scope: 'read-only' });
    const text = JSON.stringify(res.body);
    for (const secret of ['hunter2', 'abc123', ...Object.values(TOKENS)]) expect(text).to.not.include(secret);
  });

  it('lists principals and their tokens page by page', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await gw.principal()).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await gw.admin('GET', `/principals?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).to.equal(200);
      seen.push(...res.body.data.map((p: { id: string }) => p.id));
      cursor = res.body.next;
      pages++;
    } while (cursor !== null && pages < 50);
    expect(seen).to.include.members(made);
    expect(new Set(seen).size, 'no principal twice').to.equal(seen.length);

    const id = made[0]!;
    for (let i = 0; i < 4; i++) await gw.admin('POST', `/principals/${encodeURIComponent(id)}/tokens`, { label: `t${i}` });
    const first = await gw.admin('GET', `/principals/${encodeURIComponent(id)}/tokens?limit=3`);
    expect(first.body.data).to.have.length(3);
    expect(first.body.next).to.be.a('string');
    const second = await gw.admin('GET', `/principals/${encodeURIComponent(id)}/tokens?limit=3&cursor=${first.body.next}`);
    expect([...first.body.data, ...second.body.data].map((t: { label: string }) => t.label)).to.deep.equal(['test', 't0', 't1', 't2', 't3']);
    expect(second.body.next).to.equal(null);
    expect((await gw.admin('GET', '/principals?limit=0')).status).to.equal(400);
  });

  it('gives each operator token its scope and logs each use by name, never the token', async () => {
    const p = await gw.principal();
    const pid = encodeURIComponent(p.id);
    // read-only: reads, nothing else.
    expect((await as(TOKENS.PORTCULLIS_OPS_AUDITOR, 'GET', `/principals/${pid}`)).status).to.equal(200);
    const denied = await as(TOKENS.PORTCULLIS_OPS_AUDITOR, 'POST', `/principals/${pid}/credits`, { microUSD: 1000, operationId: 'op-auditor-1' });
    expect(denied.status).to.equal(403);
    expect(denied.body.error.code).to.equal('admin-forbidden');
    expect((await as(TOKENS.PORTCULLIS_OPS_AUDITOR, 'POST', '/reload')).status).to.equal(403);
    // billing: reads, credits and plans; not reloads or tokens.
    const granted = await as(TOKENS.PORTCULLIS_OPS_BILLING, 'POST', `/principals/${pid}/credits`, { microUSD: 1000, operationId: 'op-billing-1' });
    expect(granted.status, JSON.stringify(granted.body)).to.equal(201);
    expect((await as(TOKENS.PORTCULLIS_OPS_BILLING, 'POST', `/principals/${pid}/tokens`, { label: 'x' })).status).to.equal(403);
    expect((await as(TOKENS.PORTCULLIS_OPS_BILLING, 'POST', '/reload')).status).to.equal(403);
    // full: the main token.
    expect((await as(gw.adminToken, 'POST', '/reload')).status).to.equal(200);
    expect((await as('not-a-token', 'GET', '/runtime')).status).to.equal(401);

    const uses = lines.filter((l) => l['event'] === 'admin.request');
    expect(uses.some((l) => l['operator'] === 'auditor' && l['refused'] === true && l['route'] === '/admin/principals/:id/credits')).to.equal(true);
    expect(uses.some((l) => l['operator'] === 'billing-desk' && l['scope'] === 'billing' && l['status'] === 201)).to.equal(true);
    expect(uses.some((l) => l['operator'] === 'operator' && l['scope'] === 'full' && l['route'] === '/admin/reload')).to.equal(true);
    const logged = JSON.stringify(lines);
    for (const secret of [...Object.values(TOKENS), gw.adminToken]) expect(logged).to.not.include(secret);
    expect(logged).to.not.include(p.id);
  });

  it('logs and answers a refusal with the route pattern, never the raw path (which may carry a token or an id)', async () => {
    const p = await gw.principal();
    const before = lines.length;
    const paths = [`/applications/${p.token}/approve`, `/applications/${encodeURIComponent(p.id)}/refuse`, `/nothing/${p.token}`];
    for (const path of paths) {
      const res = await as(TOKENS.PORTCULLIS_OPS_AUDITOR, 'POST', path, {});
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('admin-forbidden');
      expect(res.body.error.message).to.not.include(p.token).and.not.include(p.id);
    }
    const refused = lines.slice(before).filter((l) => l['event'] === 'admin.request' && l['refused'] === true);
    expect(refused.map((l) => l['route'])).to.deep.equal(['/admin/applications/:id/approve', '/admin/applications/:id/refuse', '(no route)']);
    const logged = JSON.stringify(lines.slice(before));
    expect(logged).to.not.include(p.token);
    expect(logged).to.not.include(p.id);
  });

  it('refuses to start when a named operator token equals PORTCULLIS_ADMIN_TOKEN (it would demote the full operator)', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace(/^routes:\n/m, 'admin:\n  operators:\n    - { name: auditor, tokenEnv: PORTCULLIS_OPS_SAME, scope: read-only }\n\nroutes:\n'),
    );
    let error: unknown;
    try {
      const g = await startTestGateway({ root, env: { PORTCULLIS_OPS_SAME: 'test-operator-token' } });
      await g.close();
    } catch (err) {
      error = err;
    }
    expect(String((error as { problems?: string[] })?.problems)).to.include(
      '/admin/operators/0/tokenEnv: PORTCULLIS_OPS_SAME holds the same token as PORTCULLIS_ADMIN_TOKEN',
    );
    // `portcullis check` says the same where both are set, and nothing where they differ.
    const same = await cli(['check', '--root', root], { PORTCULLIS_ADMIN_TOKEN: 'one-token', PORTCULLIS_OPS_SAME: 'one-token' });
    expect(same.code).to.equal(1);
    expect(same.stderr).to.include('PORTCULLIS_OPS_SAME holds the same token as PORTCULLIS_ADMIN_TOKEN');
    expect((await cli(['check', '--root', root], { PORTCULLIS_ADMIN_TOKEN: 'one-token', PORTCULLIS_OPS_SAME: 'another' })).code).to.equal(0);
  });

  it('dumps the start-only settings in force, not the ones a reload read but could not apply, and lists those apart', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace(/^routes:\n/m, 'admin:\n  operators:\n    - { name: on-call, tokenEnv: PORTCULLIS_OPS_AUDITOR, scope: full }\n\nroutes:\n'),
    );
    const own = await startTestGateway({ root, env: TOKENS });
    try {
      editFile(root, 'config/gateway.yaml', (t) => t.replace('scope: full }', 'scope: read-only }'));
      const reload = await own.admin('POST', '/reload');
      expect(reload.body.needsRestart).to.include('admin.operators');
      const dump = await own.admin('GET', '/config');
      expect(dump.body.documents['config/gateway.yaml'].admin.operators[0].scope, 'what is served').to.equal('full');
      expect(dump.body.pendingRestart.settings).to.include('admin.operators');
      expect(dump.body.pendingRestart.onDisk.admin.operators[0].scope).to.equal('read-only');
      // And the token does act as the dump says.
      const res = await fetch(`${own.adminUrl}/admin/reload`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.PORTCULLIS_OPS_AUDITOR}` } });
      expect(res.status).to.equal(200);
    } finally {
      await own.close();
    }
  });

  it('refuses to start when an operator token variable is not set', async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace(/^routes:\n/m, 'admin:\n  operators:\n    - { name: ghost, tokenEnv: PORTCULLIS_OPS_GHOST, scope: full }\n\nroutes:\n'),
    );
    let error: unknown;
    try {
      await startTestGateway({ root });
    } catch (err) {
      error = err;
    }
    expect(String((error as { problems?: string[] })?.problems)).to.include('/admin/operators/0/tokenEnv names PORTCULLIS_OPS_GHOST, which is not set');
  });
});
