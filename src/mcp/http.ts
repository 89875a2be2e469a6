/**
 * POST /mcp as the MCP streamable HTTP transport in stateless mode: a new server and a new transport per
 * request (no session ids, nothing kept between requests, so any instance can answer any request), JSON
 * answers rather than an SSE stream. GET (the server-to-client stream) and DELETE (ending a session) have
 * nothing to serve without sessions: 405.
 *
 * Bounds ahead of the SDK (bounds.ts): one JSON-RPC message per request — a batch (a JSON array) is refused
 * with -32600, as the 2025-06-18 MCP revision removed batching and a batch of 100 tool calls would be 100
 * calls for the price of one request — and a message nesting deeper than the API host reads is refused
 * with -32602 invalid params, before anything walks it recursively.
 */
import type { Context } from 'koa';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { GatewayError } from '../errors.js';
import { readJson } from '../http/read-json.js';
import { negotiateVersion } from './protocol-version.js';
import { boundsRefusal } from './bounds.js';

/**
 * `build` makes the server for one request; it is given the request's context (the caller's address).
 * `admit`, if given, sees the parsed body first and may refuse the request with an HTTP error (auth.ts).
 */
export function mcpEndpoint(build: (ctx: Context) => Server, bodyLimit: () => number, admit?: (ctx: Context, body: unknown) => Promise<void>) {
  return async function mcp(ctx: Context): Promise<void> {
    if (ctx.method !== 'POST') {
      ctx.set('allow', 'POST');
      throw new GatewayError('method-not-allowed', 'the MCP endpoint is stateless: POST JSON-RPC messages; there is no stream to GET and no session to DELETE');
    }
    const body = await readJson(ctx, bodyLimit());
    const refusal = boundsRefusal(body);
    if (refusal) {
      ctx.status = refusal.status;
      ctx.body = refusal.body;
      return;
    }
    // A revision the SDK does not speak is answered here, in the words the MCP specification prescribes.
    const early = await negotiateVersion(body, ctx.get('mcp-protocol-version') || undefined, () => build(ctx));
    if (early) {
      ctx.status = early.status;
      ctx.body = early.body;
      return;
    }
    if (admit) await admit(ctx, body);
    const server = build(ctx);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    ctx.res.on('close', () => {
      void transport.close();
      void server.close();
    });
    // From here the SDK writes the answer (including JSON-RPC errors) on the raw response.
    ctx.respond = false;
    await transport.handleRequest(ctx.req, ctx.res, body);
  };
}
