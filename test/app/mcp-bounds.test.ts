/**
 * The MCP hosts bounded like the API host, through their public /mcp endpoints: one JSON-RPC message per
 * request (a batch is refused), requests per client address on the site and graph hosts (behind a proxy,
 * per the address `rateLimits.addressHeader` names, so one client's searches and wrong tokens are not
 * every other client's), arguments nested 50,000 deep refused as invalid params, and a graph call past its
 * budget of worker time stopped and refused.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile } from '../helpers/gateway.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

async function rpc(url: string, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, ...headers },
    body: typeof message === 'string' ? message : JSON.stringify(message),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const call = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

describe('MCP hosts: bounded like the API host', function () {
  this.timeout(60_000);
  let w: World;
  let tight: World;
  before(async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('perAddress: 300', 'perAddress: 3')
        .replace('failedAuthPerAddress: 30', 'failedAuthPerAddress: 3\n  addressHeader: x-forwarded-for')
        .replace('mcpPerAddress: 120', 'mcpPerAddress: 12'),
    );
    const tightRoot = configRoot();
    editFile(tightRoot, 'config/gateway.yaml', (t) => t.replace('callMs: 2000', 'callMs: 1'));
    [w, tight] = await Promise.all([startWorld({ root }), startWorld({ root: tightRoot })]);
  });
  after(() => Promise.all([w.stop(), tight.stop()]));

  it('refuses a JSON-RPC batch on both hosts with -32600, running none of its calls', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => call(i + 1, 'graph_search', { q: 'injection' }));
    for (const [host, from] of [
      ['graph', '203.0.113.1'],
      ['site', '203.0.113.2'],
    ] as const) {
      const res = await rpc(w.gw.urls[host], batch, { 'x-forwarded-for': from });
      expect(res.status, host).to.equal(400);
      expect(Array.isArray(res.body), host).to.equal(false);
      expect(res.body.error.code, host).to.equal(-32600);
      expect(res.body.error.message).to.contain('batch');
    }
  });

  it('limits /mcp requests per client address on the graph and site hosts; another address is not affected', async () => {
    for (const host of ['graph', 'site'] as const) {
      const from = { 'x-forwarded-for': host === 'graph' ? '198.51.100.21' : '198.51.100.22' };
      const statuses: number[] = [];
      for (let i = 0; i < 13; i++) statuses.push((await rpc(w.gw.urls[host], { jsonrpc: '2.0', id: i, method: 'tools/list' }, from)).status);
      expect(statuses.slice(0, 12), host).to.deep.equal(Array(12).fill(200));
      const refused = await rpc(w.gw.urls[host], { jsonrpc: '2.0', id: 99, method: 'tools/list' }, from);
      expect(refused.status, host).to.equal(429);
      expect(refused.body.error.code).to.equal('rate-limited');
      expect((await rpc(w.gw.urls[host], { jsonrpc: '2.0', id: 100, method: 'tools/list' }, { 'x-forwarded-for': '198.51.100.23' })).status, host).to.equal(
        200,
      );
    }
  });

  it("behind a proxy, a tool call counts against the client's address: one client's searches leave another's alone", async () => {
    const search = (from: string, id: number) => rpc(w.gw.urls.site, call(id, 'svc_knowledge_search', { q: 'sql injection' }), { 'x-forwarded-for': from });
    const greedy: number[] = [];
    for (let i = 0; i < 4; i++) greedy.push((await search('192.0.2.31', i)).body.result.structuredContent.status);
    expect(greedy).to.deep.equal([200, 200, 200, 429]);
    const other = await search('192.0.2.32', 10);
    expect(other.body.result.structuredContent.status).to.equal(200);
  });

  it("behind a proxy, one client's wrong tokens do not lock out another client's valid token", async () => {
    const status = (from: string, token: string, id: number) =>
      rpc(w.gw.urls.site, call(id, 'svc_research_status', {}), { 'x-forwarded-for': from, authorization: `Bearer ${token}` });
    const bad = 'pcl_pat_000000000000000000000000000000000000AAAAAA';
    for (let i = 0; i < 4; i++) await status('192.0.2.41', bad, i);
    // The guesser is refused (its address is now blocked on every listener of the process, /mcp included)...
    const guesser = await status('192.0.2.41', bad, 5);
    expect(guesser.status).to.equal(429);
    expect(guesser.body.error.code).to.equal('rate-limited');
    // ...and a valid token from another client behind the same proxy is not.
    const p = await w.gw.principal();
    const honest = await status('192.0.2.42', p.token, 6);
    expect(honest.body.result.structuredContent.status, JSON.stringify(honest.body)).to.equal(200);
  });

  it('answers arguments nested 50,000 deep with a bounded -32602 invalid-params error on both hosts', async () => {
    const deep = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`;
    for (const [host, tool, from] of [
      ['graph', 'graph_get_node', '203.0.113.51'],
      ['site', 'svc_knowledge_search', '203.0.113.52'],
    ] as const) {
      const message = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"${tool}","arguments":{"x":${deep}}}}`;
      const res = await rpc(w.gw.urls[host], message, { 'x-forwarded-for': from });
      expect(res.body.id, host).to.equal(7);
      expect(res.body.error.code, host).to.equal(-32602);
      expect(res.body.error.message).to.contain('deeper than 64');
      expect(res.body.error.data).to.deep.equal({ code: 'nesting-too-deep' });
    }
  });

  it('stops a graph call past its budget of worker time (graph.callMs) and says so; the host keeps answering', async () => {
    // A search whose words match thousands of entries: tens of milliseconds of ranking, far past the 1 ms budget on
    // any machine (a query of stop words took under 2 ms, and a fast thread could answer it before the timer fired).
    const q = 'input validation injection memory buffer overflow attack network access control';
    const heavy = await rpc(tight.gw.urls.graph, call(1, 'graph_search', { q, limit: 50 }));
    expect(heavy.status).to.equal(200);
    expect(heavy.body.result.isError).to.equal(true);
    expect(heavy.body.result.structuredContent).to.deep.include({ status: 422 });
    expect(heavy.body.result.structuredContent.error.code).to.equal('tool-call-too-long');
    // The stopped thread is replaced: the host answers the next request (a listing needs no worker).
    expect((await rpc(tight.gw.urls.graph, { jsonrpc: '2.0', id: 2, method: 'tools/list' })).body.result.tools).to.have.length(4);
  });
});
