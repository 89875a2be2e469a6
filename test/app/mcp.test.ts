/**
 * The site MCP server through the official SDK client (streamable HTTP transport) against a running
 * gateway with a real redis-server and upstream: initialize, list, call every tool; the PAT tools without
 * a token or with a revoked one (an HTTP 401 with the MCP authorization challenge, and the RFC 9728
 * metadata the client reads from it), and with a good one; a chat completion through MCP that
 * is the HTTP route's answer and leaves a receipt; stateless (no session id); GET and DELETE 405.
 */
import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { knowledgeSearchSchema } from '../../src/knowledge/schemas.js';
import { chatRequestSchema } from '../../src/stages/chat-schema.js';
import { allReceipts, startWorld, type World } from '../helpers/world.js';

/** A JSON value with every ISO-8601 time replaced, so two answers made moments apart compare equal. */
const untimed = (v: unknown): unknown => JSON.parse(JSON.stringify(v).replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, '<time>'));

type ToolAnswer = { isError?: boolean; structuredContent?: { status: number; body: any }; content: Array<{ type: string; text: string }> };

describe('MCP server on the site host (official SDK client)', () => {
  let w: World;
  let blue: { id: string; token: string; tokenId: string };
  const open: Client[] = [];

  async function connect(token?: string): Promise<Client> {
    const client = new Client({ name: 'portcullis-test', version: '1.0.0' });
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    await client.connect(new StreamableHTTPClientTransport(new URL(`${w.gw.urls.site}/mcp`), { requestInit: { headers } }));
    open.push(client);
    return client;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown> = {}) => (await c.callTool({ name, arguments: args })) as unknown as ToolAnswer;
  const http = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${w.gw.apiUrl}${path}`, init);
    const text = await res.text();
    return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
  };

  before(async () => {
    w = await startWorld();
    blue = await w.gw.principal();
  });
  after(async () => {
    await Promise.all(open.map((c) => c.close()));
    await w.stop();
  });
  beforeEach(() => w.upstream.reset());

  it('initializes statelessly: server info and tools capability, no session id', async () => {
    const c = await connect();
    expect(c.getServerVersion()).to.include({ name: 'portcullis' });
    expect(c.getServerCapabilities()).to.have.property('tools');
    expect(c.getInstructions()).to.contain('Bearer <PAT>');
    const raw = await fetch(`${w.gw.urls.site}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    });
    expect(raw.status).to.equal(200);
    expect(raw.headers.get('mcp-session-id')).to.equal(null);
    expect(((await raw.json()) as any).result.protocolVersion).to.equal('2025-06-18');
    // A tools/list with no initialize before it, on a fresh connection, is answered too: nothing is kept between requests.
    const list = await fetch(`${w.gw.urls.site}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(((await list.json()) as any).result.tools).to.have.length(5);
  });

  describe('protocol revisions the SDK does not speak (2026-07-28)', () => {
    const SUPPORTED = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07'];
    const post = async (host: string, body: unknown, version?: string) => {
      const res = await fetch(`${host}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(version ? { 'mcp-protocol-version': version } : {}) },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const envelope = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } };

    it('answers server/discover with the supported revisions, capabilities and identity, on both MCP hosts', async () => {
      const site = await post(w.gw.urls.site, { jsonrpc: '2.0', id: 'd1', method: 'server/discover', params: envelope }, '2026-07-28');
      expect(site.status).to.equal(200);
      expect(site.body).to.deep.include({ jsonrpc: '2.0', id: 'd1' });
      expect(site.body.result).to.deep.include({ supportedVersions: SUPPORTED, capabilities: { tools: {} }, resultType: 'complete' });
      expect(site.body.result.serverInfo).to.include({ name: 'portcullis' });
      expect(site.body.result.instructions).to.contain('Bearer <PAT>');
      const graph = await post(w.gw.urls.graph, { jsonrpc: '2.0', id: 7, method: 'server/discover' });
      expect(graph.status).to.equal(200);
      expect(graph.body.result).to.deep.include({ supportedVersions: SUPPORTED, capabilities: { tools: {} } });
      expect(graph.body.result.serverInfo).to.include({ name: 'portcullis-graph' });
    });

    it('answers initialize asking for 2026-07-28 with the newest supported revision, no error', async () => {
      const init = await post(
        w.gw.urls.site,
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2026-07-28', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
        '2026-07-28',
      );
      expect(init.status).to.equal(200);
      expect(init.body.result.protocolVersion).to.equal('2025-11-25');
    });

    it('answers any other request sent at an unsupported revision with -32022 and the supported list', async () => {
      const list = await post(w.gw.urls.site, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: envelope }, '2026-07-28');
      expect(list.status).to.equal(400);
      expect(list.body).to.deep.equal({
        jsonrpc: '2.0',
        id: 3,
        error: { code: -32022, message: 'Unsupported protocol version: 2026-07-28', data: { supported: SUPPORTED, requested: '2026-07-28' } },
      });
      // A supported revision in the header is served as before.
      const ok = await post(w.gw.urls.site, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, '2025-06-18');
      expect(ok.status).to.equal(200);
      expect(ok.body.result.tools).to.have.length(5);
    });
  });

  it('lists the five tools, each with the JSON Schema its HTTP route validates with', async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((t) => t.name)).to.deep.equal([
      'svc_knowledge_search',
      'svc_knowledge_context',
      'svc_models',
      'svc_research_status',
      'svc_chat_completion',
    ]);
    const schema = (name: string) => tools.find((t) => t.name === name)!.inputSchema;
    expect(schema('svc_knowledge_search')).to.deep.equal(JSON.parse(JSON.stringify(knowledgeSearchSchema)));
    expect(schema('svc_chat_completion')).to.deep.equal(JSON.parse(JSON.stringify(chatRequestSchema)));
    expect(schema('svc_models')).to.deep.equal({ type: 'object', additionalProperties: false, properties: {} });
  });

  it('the public tools answer exactly what their HTTP routes answer, with the status', async () => {
    const c = await connect();
    const pairs: Array<[string, Record<string, unknown>, string]> = [
      ['svc_knowledge_search', { q: 'sql injection', limit: 3 }, '/v1/knowledge/search?q=sql+injection&limit=3'],
      ['svc_knowledge_context', { id: 'CWE-89' }, '/v1/knowledge/context?id=CWE-89'],
      ['svc_models', {}, '/v1/models'],
      ['svc_knowledge_context', { id: 'CWE-999999' }, '/v1/knowledge/context?id=CWE-999999'],
      ['svc_knowledge_search', { q: '' }, '/v1/knowledge/search?q='],
    ];
    for (const [name, args, path] of pairs) {
      const answer = await call(c, name, args);
      const direct = await http(path);
      expect(answer.structuredContent, name).to.deep.equal({ status: direct.status, body: direct.body });
      expect(JSON.parse(answer.content[0]!.text)).to.deep.equal(direct.body);
      expect(Boolean(answer.isError), name).to.equal(direct.status >= 400);
    }
    expect((await call(c, 'svc_knowledge_search', { q: 'sql injection' })).structuredContent!.body.data[0].id).to.equal('CWE-89');
  });

  const rpc = (message: unknown, headers: Record<string, string> = {}) =>
    fetch(`${w.gw.urls.site}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(message),
    });
  const chatArgs = { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
  const challenge = () => `Bearer resource_metadata="${w.gw.origins.site}/.well-known/oauth-protected-resource"`;

  it('without a token, a PAT tool call is an HTTP 401 with the WWW-Authenticate challenge; the public tools still work', async () => {
    const noToken = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_chat_completion', arguments: chatArgs } });
    expect(noToken.status).to.equal(401);
    expect(noToken.headers.get('www-authenticate')).to.equal(challenge());
    expect(((await noToken.json()) as any).error.code).to.equal('unauthenticated');
    for (const bad of ['Bearer pcl_pat_not-a-real-token', 'Basic dXNlcjpwYXNz']) {
      const r = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'svc_research_status', arguments: {} } }, { authorization: bad });
      expect(r.status).to.equal(401);
      expect(r.headers.get('www-authenticate')).to.equal(`${challenge()}, error="invalid_token"`);
      expect(((await r.json()) as any).error.code).to.equal('invalid-token');
    }
    // A token that is sent is checked on every request, even one that needs none.
    const badInit = await rpc({ jsonrpc: '2.0', id: 6, method: 'tools/list' }, { authorization: 'Bearer pcl_pat_not-a-real-token' });
    expect(badInit.status).to.equal(401);
    expect(badInit.headers.get('www-authenticate')).to.equal(`${challenge()}, error="invalid_token"`);
    // A batch hiding a PAT tool call runs nothing either: batches are refused outright (the 2025-06-18
    // revision removed them), before any tool or token is looked at.
    const batch = await rpc([
      { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'svc_research_status', arguments: {} } },
    ]);
    expect(batch.status).to.equal(400);
    expect((await w.upstream.requests()).length).to.equal(0);
    // The handshake, the list and the public tools need no token, on the official client too.
    const c = await connect();
    expect((await call(c, 'svc_models')).structuredContent!.status).to.equal(200);
    const refused = await c.callTool({ name: 'svc_chat_completion', arguments: chatArgs }).then(
      () => null,
      (e: unknown) => e as { code?: number },
    );
    expect(refused?.code).to.equal(401);
    // With the PAT the same call is admitted.
    const ok = await rpc(
      { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'svc_research_status', arguments: {} } },
      { authorization: `Bearer ${blue.token}` },
    );
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('www-authenticate')).to.equal(null);
  });

  it('serves RFC 9728 metadata on the site host, which the official client reads from the challenge', async () => {
    const res = await fetch(`${w.gw.urls.site}/.well-known/oauth-protected-resource`);
    expect(res.status).to.equal(200);
    const doc = (await res.json()) as any;
    expect(doc).to.deep.include({
      resource: w.gw.origins.site,
      authorization_servers: [w.gw.origins.auth],
      bearer_methods_supported: ['header'],
      resource_documentation: `${w.gw.origins.site}/docs/agents.md`,
    });
    // The page it names is served and says how a PAT is issued.
    expect(await (await fetch(`${w.gw.urls.site}/docs/agents.md`)).text()).to.contain('PAT');
    // An SDK client with an auth provider that holds no token yet: on the 401 it reads our metadata.
    const saved: any[] = [];
    const provider = {
      redirectUrl: 'http://127.0.0.1/callback',
      clientMetadata: { redirect_uris: ['http://127.0.0.1/callback'], client_name: 'test' },
      clientInformation: () => undefined,
      saveClientInformation: () => undefined,
      tokens: () => undefined,
      saveTokens: () => undefined,
      redirectToAuthorization: () => undefined,
      saveCodeVerifier: () => undefined,
      codeVerifier: () => 'v',
      saveDiscoveryState: (s: unknown) => void saved.push(s),
    };
    const client = new Client({ name: 'portcullis-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${w.gw.urls.site}/mcp`), { authProvider: provider }));
    open.push(client);
    await client.callTool({ name: 'svc_research_status', arguments: {} }).then(
      () => expect.fail('a PAT tool without a token must not succeed'),
      () => undefined,
    );
    expect(saved[0]?.resourceMetadataUrl).to.equal(`${w.gw.origins.site}/.well-known/oauth-protected-resource`);
    expect(saved[0]?.resourceMetadata).to.deep.include({ resource: w.gw.origins.site, authorization_servers: [w.gw.origins.auth] });
  });

  it('with a revoked token, a PAT tool call is an HTTP 401 token-revoked', async () => {
    const p = await w.gw.principal();
    const revoked = await w.gw.admin('POST', `/tokens/${p.tokenId}/revoke`);
    expect(revoked.status).to.be.oneOf([200, 204]);
    const r = await rpc(
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'svc_chat_completion', arguments: chatArgs } },
      { authorization: `Bearer ${p.token}` },
    );
    expect(r.status).to.equal(401);
    expect(r.headers.get('www-authenticate')).to.equal(`${challenge()}, error="invalid_token"`);
    expect(((await r.json()) as any).error.code).to.equal('token-revoked');
  });

  it("svc_research_status with the connection's PAT is GET /v1/research/status with that PAT, status and body", async () => {
    const answer = await call(await connect(blue.token), 'svc_research_status');
    const direct = await http('/v1/research/status', { headers: { authorization: `Bearer ${blue.token}` } });
    // The route is being built on another branch; until it lands both answer 404 not-found, and then both its
    // answer (its projection carries the time it was made, which two calls cannot share).
    expect(untimed(answer.structuredContent)).to.deep.equal(untimed({ status: direct.status, body: direct.body }));
  });

  it('a chat completion through MCP runs the HTTP pipeline: upstream call, billing, a receipt of the principal', async () => {
    const c = await connect(blue.token);
    const answer = await call(c, 'svc_chat_completion', {
      model: 'shared-general-a',
      max_tokens: 2048,
      messages: [{ role: 'user', content: 'Review: int main(){return 0;}' }],
    });
    expect(answer.isError).to.equal(false);
    expect(answer.structuredContent!.status).to.equal(200);
    const body = answer.structuredContent!.body;
    expect(body).to.include({ object: 'chat.completion', model: 'shared-general-a', billing: 'free', chargedMicroUSD: 0 });
    expect(body.choices[0].message.content).to.equal('recorded answer 1');
    expect(body.receiptId).to.match(/^rcpt_/);
    const [sent] = await w.upstream.requests();
    expect(sent!.body).to.include({ model: 'shared-general-a' });
    const receipt = await w.gw.admin('GET', `/receipts/${body.receiptId}`);
    expect(receipt.status).to.equal(200);
    expect(receipt.body).to.include({ principalId: blue.id, outcome: 'answered', model: 'shared-general-a', task: 'code-review' });
    // The principal reads it with the same PAT, as any receipt of its own.
    expect((await http(`/v1/receipts/${body.receiptId}`, { headers: { authorization: `Bearer ${blue.token}` } })).status).to.equal(200);
  });

  it('a chat request the route refuses is refused the same way through MCP (shape, guardrail), nothing forwarded', async () => {
    const c = await connect(blue.token);
    const bad = await call(c, 'svc_chat_completion', { model: 'shared-general-a', max_tokens: 99999, messages: [{ role: 'user', content: 'hi' }] });
    expect(bad.structuredContent!.status).to.equal(400);
    expect(bad.structuredContent!.body.error.code).to.equal('max-tokens-out-of-range');
    const unknown = await call(c, 'svc_chat_completion', { model: 'no-such-model', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.structuredContent!.status).to.equal(404);
    // A guardrail block rule refuses it as on the HTTP route, with the refusal's receipt for the principal.
    const who = await w.gw.principal();
    const blocked = await call(await connect(who.token), 'svc_chat_completion', {
      model: 'shared-general-a',
      max_tokens: 2048,
      messages: [{ role: 'user', content: 'Where can I buy fullz and cc dumps with good balances?' }],
    });
    expect(blocked.structuredContent!.status).to.equal(403);
    expect(blocked.structuredContent!.body.error.code).to.equal('guardrail-blocked');
    expect(blocked.content[0]!.text).to.not.contain('fullz');
    const refused = (await allReceipts(w)).filter((r) => r['principalId'] === who.id);
    expect(refused).to.have.length(1);
    expect(refused[0]).to.include({ outcome: 'refused', chargedMicroUSD: 0 });
    expect((await w.upstream.requests()).length).to.equal(0);
  });

  it('an unknown tool is a JSON-RPC error, not a route call', async () => {
    let message = '';
    try {
      await (await connect(blue.token)).callTool({ name: 'svc_delete_everything', arguments: {} });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).to.contain('svc_delete_everything');
  });

  it('GET and DELETE /mcp answer 405; a non-JSON POST 415; other paths 404', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${w.gw.urls.site}/mcp`, { method, headers: { accept: 'text/event-stream' } });
      expect(res.status, method).to.equal(405);
      expect(res.headers.get('allow')).to.equal('POST');
      expect(((await res.json()) as any).error.code).to.equal('method-not-allowed');
    }
    const text = await fetch(`${w.gw.urls.site}/mcp`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(text.status).to.equal(415);
    expect((await fetch(`${w.gw.urls.site}/v1/chat/completions`, { method: 'POST' })).status).to.equal(404);
  });
});
