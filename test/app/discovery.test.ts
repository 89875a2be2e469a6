/**
 * Discovery as an agent meets it: knowing only the site origin, it reads /.well-known/mcp.json and finds
 * the MCP servers, the plain-HTTP tools, the control-plane profile and the docs, and uses each. The
 * generated entry points name every route they should, carry this deployment's origins, and are
 * cacheable by ETag; the control-plane profile and the services catalog come from config and rules.
 */
import { expect } from 'chai';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request } from 'undici';
import { jobRequestSchema } from '../../src/stages/chat-schema.js';
import { REPO } from '../helpers/gateway.js';
import { startWorld, type World } from '../helpers/world.js';

describe('discovery: entry points, control plane, security services', () => {
  let w: World;
  let site: string;
  const getJson = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, url).to.equal(200);
    expect(res.headers.get('content-type'), url).to.match(/^application\/json/);
    return (await res.json()) as any;
  };
  const getText = async (url: string) => {
    const res = await fetch(url);
    expect(res.status, url).to.equal(200);
    expect(res.headers.get('content-type'), url).to.match(/^text\/markdown/);
    return res.text();
  };

  before(async () => {
    w = await startWorld();
    site = w.gw.origins.site;
  });
  after(() => w.stop());

  it('an agent that knows only the site origin finds and uses everything from /.well-known/mcp.json', async () => {
    const blue = await w.gw.principal();
    const map = await getJson(`${site}/.well-known/mcp.json`);
    expect(map).to.deep.equal(await getJson(`${site}/mcp.json`));

    // The MCP server it names: connect, list, call a public tool and a PAT tool.
    const server = map.mcpServers.portcullis;
    expect(server.type).to.equal('streamable-http');
    const client = new Client({ name: 'walker', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { authorization: `Bearer ${blue.token}` } } }));
    expect((await client.listTools()).tools.map((t) => t.name)).to.include.members(server.tools.map((t: any) => t.name));
    const chat = (await client.callTool({
      name: 'svc_chat_completion',
      arguments: { model: 'shared-general-a', max_tokens: 256, messages: [{ role: 'user', content: 'hello' }] },
    })) as any;
    expect(chat.structuredContent.status).to.equal(200);
    await client.close();

    // The graph server it names.
    const graph = new Client({ name: 'walker', version: '1' });
    await graph.connect(new StreamableHTTPClientTransport(new URL(map.mcpServers['portcullis-graph'].url)));
    expect((await graph.listTools()).tools.map((t) => t.name)).to.include('graph_shortest_path');
    await graph.close();

    // The plain-HTTP tools it lists, by their absolute URLs.
    const tool = (name: string) => map.tools.find((t: any) => t.name === name);
    expect(map.tools.map((t: any) => t.name)).to.have.members(['svc_knowledge_search', 'svc_knowledge_context', 'svc_chat_completion', 'svc_research_run']);
    const search = await getJson(`${tool('svc_knowledge_search').url}?q=sql+injection`);
    expect(search.data[0].id).to.equal('CWE-89');
    const ctx = await getJson(`${tool('svc_knowledge_context').url}?id=T1190`);
    expect(ctx.title).to.equal('Exploit Public-Facing Application');
    const run = tool('svc_research_run');
    expect(run).to.include({ method: 'POST' });
    expect(run.inputSchema).to.deep.equal(JSON.parse(JSON.stringify(jobRequestSchema)));
    const job = await fetch(run.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${blue.token}`, 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({
        model: 'shared-general-a',
        task: 'code-review',
        scopeId: 'owned',
        max_tokens: 256,
        messages: [{ role: 'user', content: 'hello' }],
      }),
    });
    // The job API is reached at the URL given; a blue principal without an approved scope is answered by admission, not 404.
    expect(job.status).to.not.equal(404);

    // The control plane and the docs it points at.
    const profile = await getJson(map.controlPlane);
    expect(profile.mcp.site.endpoint).to.equal(server.url);
    expect(await getText(map.docs.agentQuickstart)).to.contain(server.url);
    expect(await getText(map.docs.llmsTxt)).to.contain(map.controlPlane);
  });

  it('/v1/control-plane: every public host origin, API version, wires, auth per route class, MCP endpoints, versions, receipt key id', async () => {
    const p = await getJson(`${w.gw.apiUrl}/v1/control-plane`);
    const { admin: _admin, ...publicHosts } = w.gw.origins;
    expect(p.hosts).to.deep.equal(publicHosts);
    expect(p.apiVersion).to.equal('v1');
    expect(p.wires.offered.map((x: any) => x.url)).to.include(`${w.gw.origins.api}/v1/chat/completions`);
    expect(p.wires.refused.map((x: any) => x.path)).to.include.members(['/v1/messages', '/v1/responses']);
    const cls = Object.fromEntries(p.auth.routeClasses.map((c: any) => [c.class, c]));
    expect(cls.public.methods).to.deep.equal(['none']);
    expect(cls.public.routes).to.include.members(['GET /v1/knowledge/search', 'GET /v1/knowledge/context', 'GET /v1/control-plane']);
    expect(cls.research.methods).to.deep.equal(['pat', 'cookie']);
    expect(cls.purchase.methods).to.deep.equal(['cookie']);
    expect(p.mcp.site.endpoint).to.equal(`${w.gw.origins.site}/mcp`);
    expect(p.mcp.graph.endpoint).to.equal(`${w.gw.origins.graph}/mcp`);
    expect(p.mcp.site.sessions).to.equal(false);
    const runtime = w.gw.holder.current.versions;
    expect(p.versions).to.include({ catalog: runtime.catalog, rules: runtime.rules, policy: runtime.policy, guardrails: runtime.guardrails });
    expect(p.versions.knowledge.cwe.version).to.equal('4.15');
    expect(p.versions.knowledge.attack.version).to.equal('18.1');
    expect(p.versions.knowledge.kev.version).to.equal('2025.08.25');
    // The key the operator plane publishes is the one the profile names.
    const key = await w.gw.admin('GET', '/receipt-key');
    expect(key.status).to.equal(200);
    expect(p.receipts).to.deep.equal({ alg: key.body.alg, keyId: key.body.keyId });
    // The map is a view of the same profile.
    const map = await getJson(`${site}/mcp.json`);
    expect(map.mcpServers.portcullis.tools).to.deep.equal(p.mcp.site.tools);
  });

  it('/v1/security/services: each task with its summary, band, teams, models and what a principal needs', async () => {
    const s = await getJson(`${w.gw.apiUrl}/v1/security/services`);
    const task = (id: string) => s.data.find((t: any) => t.task === id);
    expect(s.data.map((t: any) => t.task)).to.have.members(['code-review', 'vulnerability-triage', 'remediation', 'payload-crafting', 'c2-tooling']);
    const review = task('code-review');
    expect(review.summary).to.be.a('string').and.not.empty;
    expect(review.teams.map((t: any) => t.team)).to.deep.equal(['blue', 'red']);
    expect(review.teams[0].requires).to.include({ verification: false, rung: null });
    expect(review.teams[0].models.map((m: any) => m.id)).to.include('shared-general-a');
    expect(review.teams[1].requires.rung).to.deep.equal({ id: 'card', level: 'L1' });
    expect(task('vulnerability-triage').teams[1].requires.rung).to.deep.equal({ id: 'business', level: 'L3' });
    const offensive = task('payload-crafting');
    expect(offensive.teams.map((t: any) => t.team)).to.deep.equal(['red']);
    expect(offensive.teams[0].requires.rung).to.deep.equal({ id: 'contracted', level: 'L4' });
    const catalog = await getJson(`${w.gw.apiUrl}/v1/models`);
    const listed = (id: string) => catalog.data.find((m: any) => m.id === id).availability;
    expect(offensive.teams[0].models).to.deep.equal(['red-whitehacker-a', 'red-whitehacker-b'].map((id) => ({ id, availability: listed(id) })));
  });

  it("llms.txt: title, summary, a link to every doc and every entry point, with this deployment's origins", async () => {
    const text = await getText(`${site}/llms.txt`);
    expect(text.split('\n')[0]).to.equal('# portcullis');
    expect(text).to.match(/^> \S/m);
    const docs = readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md'));
    for (const d of docs) expect(text, d).to.contain(`${site}/docs/${d}`);
    const api = w.gw.origins.api;
    for (const url of [
      `${site}/mcp`,
      `${site}/mcp.json`,
      `${site}/.well-known/mcp.json`,
      `${site}/agent-quickstart.md`,
      `${site}/llms-full.txt`,
      `${w.gw.origins.graph}/mcp`,
      `${api}/v1/control-plane`,
      `${api}/v1/security/services`,
      `${api}/v1/models`,
      `${api}/v1/knowledge/search`,
      `${api}/v1/knowledge/context`,
    ]) {
      expect(text, url).to.contain(url);
    }
    // Each doc's summary is whole sentences, or whole words and an ellipsis: never a word cut in two.
    for (const line of text.split('\n').filter((l) => l.includes(`${site}/docs/`))) {
      const summary = /\]\([^)]+\): (.*)$/.exec(line)![1]!;
      expect(summary.length, line).to.be.at.most(201);
      expect(summary, line).to.match(/([.:;!?)]|[A-Za-z0-9`]…)$/);
      const words = summary.replace(/…$/, '').split(/\s+/);
      const source = (await getText(/\]\(([^)]+)\)/.exec(line)![1]!)).replace(/\s+/g, ' ');
      expect(source, `${line}: its last word is a whole word of the doc`).to.match(
        new RegExp(`${words.at(-1)!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\s|$)`),
      );
    }
    // Every doc link resolves on the site.
    for (const d of docs) expect((await fetch(`${site}/docs/${d}`)).status, d).to.equal(200);
    expect((await fetch(`${site}/docs/nothing.md`)).status).to.equal(404);
  });

  it('llms-full.txt is README and every doc in full, placeholders replaced by the real origins', async () => {
    const text = await getText(`${site}/llms-full.txt`);
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    expect(text).to.contain(readme.split('\n').slice(0, 6).join('\n'));
    for (const d of readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md'))) {
      expect(text, d).to.contain(`<!-- source: docs/${d} -->`);
      const firstHeading = /^#\s+.+$/m.exec(readFileSync(join(REPO, 'docs', d), 'utf8'))![0];
      expect(text, d).to.contain(firstHeading);
    }
    expect(text).to.not.match(/\{(base_url|site_url|graph_url|auth_url|console_url)\}/);
    expect(text).to.contain(`curl -s ${w.gw.origins.site}/.well-known/mcp.json`);
  });

  it('agent-quickstart.md: the agent procedure from docs/agents.md, naming every route of it with real URLs', async () => {
    const text = await getText(`${site}/agent-quickstart.md`);
    const api = w.gw.origins.api;
    for (const url of [
      `${site}/.well-known/mcp.json`,
      `${site}/mcp`,
      `${w.gw.origins.graph}/mcp`,
      `${w.gw.origins.console}`,
      `${api}/v1/control-plane`,
      `${api}/v1/research/status`,
      `${api}/v1/research/ekyc/start`,
      `${api}/v1/models`,
      `${api}/v1/security/services`,
      `${api}/v1/chat/completions`,
      `${api}/v1/research/jobs`,
      `${api}/v1/research/job?jobId=`,
      `${api}/v1/knowledge/search?q=`,
      `${api}/v1/knowledge/context?id=`,
    ]) {
      expect(text, url).to.contain(url);
    }
    for (const tool of ['svc_research_status', 'svc_models', 'svc_chat_completion', 'svc_knowledge_search', 'svc_knowledge_context'])
      expect(text).to.contain(tool);
    expect(text).to.not.match(/\{[a-z_]+_url\}/);
  });

  it('entry points are public, CORS open and cacheable: the ETag answers 304 to if-none-match', async () => {
    for (const path of ['/mcp.json', '/.well-known/mcp.json', '/llms.txt', '/llms-full.txt', '/agent-quickstart.md']) {
      const first = await fetch(`${site}${path}`);
      const etag = first.headers.get('etag');
      expect(etag, path).to.match(/^"[\w-]+"$/);
      expect(first.headers.get('access-control-allow-origin')).to.equal('*');
      expect(first.headers.get('cache-control')).to.contain('public');
      // undici's request, not fetch: fetch adds `cache-control: no-cache` to a conditional request, which rightly forces a 200.
      const again = await request(`${site}${path}`, { headers: { 'if-none-match': etag! } });
      expect(again.statusCode, path).to.equal(304);
      expect(await again.body.text()).to.equal('');
      const other = await request(`${site}${path}`, { headers: { 'if-none-match': '"other"' } });
      expect(other.statusCode).to.equal(200);
      await other.body.dump();
    }
  });
});
