/**
 * Versioned configuration: strict reading (unknown keys, wrong types and dangling names refused with the
 * file and path named), environment overrides held to the same schema, availability derived from routes,
 * and live reload that swaps only a runtime that compiled whole — a bad edit leaves the old one serving.
 */
import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/config/documents.js';
import { configRoot, editFile, REPO, startTestGateway } from '../helpers/gateway.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { until } from '../helpers/wait.js';

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('loads the shipped documents, each with a version and a schema beside it', () => {
    const b = loadConfig(REPO, {});
    for (const doc of [b.models, b.billing, b.rungs, b.guardrails, b.firewall, b.compliance, b.gateway]) {
      expect(doc.version, doc.file).to.be.a('string').and.not.empty;
      expect(doc.sha256).to.match(/^[0-9a-f]{64}$/);
    }
    for (const dir of ['catalog', 'rules', 'config']) {
      for (const f of readdirSync(join(REPO, dir)).filter((f) => f.endsWith('.yaml'))) {
        expect(readdirSync(join(REPO, dir)), `${dir}/${f}`).to.include(f.replace('.yaml', '.schema.json'));
      }
    }
  });

  it("PORTCULLIS_PORT_BASE moves every listener at once, keeping their spacing; a listener's own port still wins", () => {
    const ports = (env: Record<string, string>) =>
      Object.fromEntries(Object.entries(loadConfig(REPO, env).gateway.data.listeners).map(([name, l]) => [name, l.port]));
    expect(ports({ PORTCULLIS_PORT_BASE: '9100' })).to.deep.equal({ api: 9100, auth: 9101, console: 9102, site: 9103, graph: 9104, admin: 9110 });
    expect(ports({ PORTCULLIS_PORT_BASE: '9100', PORTCULLIS_ADMIN_PORT: '9999' })['admin']).to.equal(9999);
    expect(problemsOf(() => loadConfig(REPO, { PORTCULLIS_PORT_BASE: 'many' })).join('\n')).to.match(/listeners\/api\/port/);
  });

  it('rejects an unknown key, naming the file and the path', () => {
    const root = configRoot();
    editFile(root, 'catalog/models.yaml', (t) => t.replace('    echo: strict\n', '    echo: strict\n    colour: blue\n'));
    expect(problemsOf(() => loadConfig(root, {}))).to.deep.include('catalog/models.yaml: /models/0 has unknown key "colour"');
  });

  it('rejects a wrong value with the allowed ones', () => {
    const root = configRoot();
    editFile(root, 'catalog/models.yaml', (t) => t.replace('team: blue', 'team: purple'));
    expect(problemsOf(() => loadConfig(root, {}))).to.deep.include('catalog/models.yaml: /models/0/team must be one of ["blue","red"]');
  });

  it("names only the chosen store kind's problems, not the other kinds' (a bad identityCacheEntries or replicaAcks on Redis)", () => {
    const root = configRoot();
    const store = (lines: string) => editFile(root, 'config/gateway.yaml', (t) => t.replace(/store:\n {2}kind: \w+(\n {2}.*)*\n/, `store:\n${lines}\n`));
    store('  kind: redis\n  url: redis://127.0.0.1:6379\n  identityCacheEntries: -1\n  replicaAcks: abc');
    expect(problemsOf(() => loadConfig(root, {}))).to.deep.equal([
      'config/gateway.yaml: /store/replicaAcks must be integer',
      'config/gateway.yaml: /store/replicaAcks must be "auto"',
      'config/gateway.yaml: /store/replicaAcks must match exactly one schema in oneOf',
      'config/gateway.yaml: /store/identityCacheEntries must be >= 0',
    ]);
    // A Redis-only key on the memory store is the memory kind's unknown key, nothing about Redis.
    store('  kind: memory\n  identityCacheEntries: 10');
    expect(problemsOf(() => loadConfig(root, {}))).to.deep.equal(['config/gateway.yaml: /store has unknown key "identityCacheEntries"']);
    // A kind that is none of them keeps every branch's say, each constant named.
    store('  kind: mongo');
    const problems = problemsOf(() => loadConfig(root, {}));
    expect(problems).to.include.members(['config/gateway.yaml: /store/kind must be "memory"', 'config/gateway.yaml: /store/kind must be "redis"']);
  });

  it('rejects a file without version and a YAML syntax error', () => {
    const root = configRoot();
    editFile(root, 'rules/rungs.yaml', (t) => t.replace(/^version: .*$/m, ''));
    editFile(root, 'catalog/billing.yaml', (t) => `${t}\n  bad: [unclosed\n`);
    const problems = problemsOf(() => loadConfig(root, {}));
    expect(problems.some((p) => p.startsWith("rules/rungs.yaml: / must have required property 'version'"))).to.equal(true);
    expect(problems.some((p) => p.startsWith('catalog/billing.yaml: '))).to.equal(true);
  });

  it('rejects names that dangle across files', () => {
    const root = configRoot();
    editFile(root, 'catalog/models.yaml', (t) => t.replace('tasks: [code-review, vulnerability-triage, remediation]', 'tasks: [code-review, knitting]'));
    editFile(root, 'config/gateway.yaml', (t) => t.replace('shared-general-b: {}', 'shared-general-c: {}'));
    const problems = problemsOf(() => loadConfig(root, {}));
    expect(problems).to.deep.include('catalog/models.yaml: /models/0/tasks/1 names unknown task "knitting"');
    expect(problems).to.deep.include('config/gateway.yaml: /routes/shared/models/shared-general-c is not in the catalog');
  });

  it('applies environment overrides and validates them like the file', () => {
    const b = loadConfig(REPO, { PORT: '9999', REDIS_URL: 'redis://127.0.0.1:6390', PORTCULLIS_ROUTE_SHARED_URL: 'http://127.0.0.1:9000/v1' });
    expect(b.gateway.data.listeners.api.port).to.equal(9999);
    expect(b.gateway.data.store).to.deep.equal({ kind: 'redis', url: 'redis://127.0.0.1:6390' });
    expect(b.gateway.data.routes['shared']!.origin).to.deep.equal({ baseUrl: 'http://127.0.0.1:9000/v1' });
    expect(problemsOf(() => loadConfig(REPO, { PORT: 'eighty' }))).to.deep.include('config/gateway.yaml: /listeners/api/port must be integer');
    expect(problemsOf(() => loadConfig(REPO, { PORTCULLIS_ROUTE_SHARED_URL: 'ftp://x' })).join()).to.contain('/routes/shared/origin');
  });

  it('selects a redis cluster with REDIS_CLUSTER_NODES, and refuses a malformed node list like a bad file', () => {
    const c = loadConfig(REPO, { REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7000,redis-3.internal:7001' });
    expect(c.gateway.data.store).to.deep.equal({ kind: 'redis', nodes: ['10.0.0.1:7000', '10.0.0.2:7000', 'redis-3.internal:7001'] });
    // REDIS_URL beside it lends the cluster its scheme and credentials.
    const tls = loadConfig(REPO, { REDIS_CLUSTER_NODES: '10.0.0.1:7000', REDIS_URL: 'rediss://gw:secret@10.0.0.1:7000' });
    expect(tls.gateway.data.store).to.deep.equal({ kind: 'redis', url: 'rediss://gw:secret@10.0.0.1:7000', nodes: ['10.0.0.1:7000'] });
    for (const bad of ['', '10.0.0.1', '10.0.0.1:7000,', 'redis://10.0.0.1:7000']) {
      const problems = problemsOf(() => loadConfig(REPO, { REDIS_CLUSTER_NODES: bad })).join('\n');
      expect(problems, bad).to.contain('config/gateway.yaml: /store');
    }
  });

  describe('live reload', () => {
    let up: RecordingUpstream;
    before(async () => {
      up = await startRecordingUpstream();
    });
    after(() => up.stop());

    it('serves a model once its route is configured, and keeps serving when a later edit is bad', async () => {
      const gw = await startTestGateway({ upstreamUrl: up.baseUrl });
      try {
        const availability = async () => {
          const res = await fetch(`${gw.apiUrl}/v1/models`);
          const { data } = (await res.json()) as { data: Array<{ id: string; availability: string }> };
          return Object.fromEntries(data.map((m) => [m.id, m.availability]));
        };
        expect(await availability()).to.deep.equal({
          'shared-general-a': 'served',
          'shared-general-b': 'served',
          'red-whitehacker-a': 'served',
          'red-whitehacker-b': 'route not configured',
        });

        editFile(gw.root, 'config/gateway.yaml', (t) =>
          t.replace('      # red-whitehacker-b has no origin', '      red-whitehacker-b: {}\n      # red-whitehacker-b has no origin'),
        );
        const ok = await gw.admin('POST', '/reload');
        expect(ok.status).to.equal(200);
        expect((await availability())['red-whitehacker-b']).to.equal('served');

        editFile(gw.root, 'catalog/models.yaml', (t) => t.replace('team: blue', 'team: green'));
        const bad = await gw.admin('POST', '/reload');
        expect(bad.status).to.equal(422);
        expect(bad.body.error.code).to.equal('config-invalid');
        expect(bad.body.error.message).to.contain('catalog/models.yaml: /models/0/team');
        expect((await availability())['red-whitehacker-b']).to.equal('served');
        const p = await gw.principal();
        expect((await gw.chat(p.token, { model: 'shared-general-a', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] })).status).to.equal(200);
      } finally {
        await gw.close();
      }
    });

    it('reloads on its own when a file changes on disk', async () => {
      const gw = await startTestGateway({ upstreamUrl: up.baseUrl });
      gw.holder.watch(20);
      try {
        const before = gw.holder.current;
        editFile(gw.root, 'rules/rungs.yaml', (t) => t.replace(/^version: .*$/m, 'version: "2099.1.1"'));
        await until(() => gw.holder.current !== before, { what: 'the watcher to reload the edited rules' });
        expect(gw.holder.current.versions.rules).to.equal('2099.1.1');
      } finally {
        await gw.close();
      }
    });
  });
});
