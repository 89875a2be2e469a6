/**
 * The graph MCP server on its own listener, through the official SDK client: initialize, list, call every
 * tool; CAPEC-66 is a neighbour of CWE-89; the shortest path from a KEV CVE to the weakness class above its
 * CWE; walks bounded; refused arguments and unknown ids as error results with the error table's codes.
 */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWorld, type World } from '../helpers/world.js';

describe('graph MCP server (graph host, official SDK client)', () => {
  let w: World;
  let c: Client;
  const call = async (name: string, args: Record<string, unknown>) =>
    (await c.callTool({ name, arguments: args })) as { isError?: boolean; structuredContent: any };

  before(async () => {
    w = await startWorld();
    c = new Client({ name: 'portcullis-test', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${w.gw.urls.graph}/mcp`)));
  });
  after(async () => {
    await c.close();
    await w.stop();
  });

  it('initializes and lists its four read-only tools', async () => {
    expect(c.getServerVersion()).to.include({ name: 'portcullis-graph' });
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name)).to.deep.equal(['graph_search', 'graph_get_node', 'graph_neighbours', 'graph_shortest_path']);
    expect(tools.every((t) => t.annotations?.readOnlyHint === true)).to.equal(true);
    expect((tools.find((t) => t.name === 'graph_neighbours')!.inputSchema as any).properties.depth).to.include({ maximum: 3 });
  });

  it('graph_search finds start ids; graph_get_node gives a node with its edge counts', async () => {
    const found = await call('graph_search', { q: 'sql injection', limit: 1 });
    expect(found.structuredContent.data[0].id).to.equal('CWE-89');
    const node = await call('graph_get_node', { id: 'CWE-89' });
    expect(node.isError).to.not.equal(true);
    expect(node.structuredContent).to.include({ id: 'CWE-89', kind: 'cwe' });
    expect(node.structuredContent.edges['related-attack-pattern'].out).to.be.greaterThan(0);
  });

  it('graph_neighbours: CAPEC-66 is a neighbour of CWE-89, by edge type and direction', async () => {
    const walk = await call('graph_neighbours', { id: 'CWE-89', types: ['related-attack-pattern'], direction: 'out' });
    expect(walk.structuredContent.nodes).to.deep.include({
      id: 'CAPEC-66',
      kind: 'capec',
      title: 'CAPEC-66',
      depth: 1,
      via: { from: 'CWE-89', type: 'related-attack-pattern', direction: 'out' },
    });
    expect(walk.structuredContent.nodes.every((n: any) => n.kind === 'capec')).to.equal(true);
  });

  it('graph_neighbours walks deeper and stops at its limit, saying so', async () => {
    const walk = await call('graph_neighbours', { id: 'T1190', depth: 2, limit: 3 });
    expect(walk.structuredContent).to.include({ count: 3, truncated: true });
  });

  it('graph_shortest_path: from a KEV CVE through its CWE to the weakness class above it', async () => {
    const path = await call('graph_shortest_path', { from: 'CVE-2021-42258', to: 'CWE-74' });
    expect(path.structuredContent).to.include({ found: true, length: 3 });
    expect(path.structuredContent.edges).to.deep.equal([
      { from: 'CVE-2021-42258', type: 'weakness', to: 'CWE-89' },
      { from: 'CWE-89', type: 'child-of', to: 'CWE-943' },
      { from: 'CWE-943', type: 'child-of', to: 'CWE-74' },
    ]);
  });

  it("refuses arguments outside the schema and unknown ids with the error table's codes", async () => {
    const deep = await call('graph_neighbours', { id: 'CWE-89', depth: 9 });
    expect(deep.isError).to.equal(true);
    expect(deep.structuredContent).to.deep.include({ status: 400 });
    expect(deep.structuredContent.error.code).to.equal('invalid-knowledge-query');
    expect(deep.structuredContent.error.message).to.match(/^depth:/);
    const missing = await call('graph_get_node', { id: 'T9999' });
    expect(missing.structuredContent).to.deep.equal({
      status: 404,
      error: { code: 'knowledge-not-found', message: 'T9999 is not in the knowledge evidence', type: 'not_found_error', param: null },
    });
    const extra = await call('graph_shortest_path', { from: 'CWE-89', to: 'CWE-74', via: 'x' });
    expect(extra.structuredContent.error.message).to.match(/^via:/);
  });

  it('GET and DELETE /mcp answer 405, and the graph host serves nothing else', async () => {
    for (const method of ['GET', 'DELETE']) expect((await fetch(`${w.gw.urls.graph}/mcp`, { method })).status, method).to.equal(405);
    expect((await fetch(`${w.gw.urls.graph}/mcp.json`)).status).to.equal(404);
  });
});
