/**
 * MCP authorization, as the MCP authorization spec asks of a protected resource. A request that calls a
 * tool needing a PAT (tools.ts, `auth: 'pat'`) without a valid one is answered before the MCP server
 * sees it: HTTP 401 with `WWW-Authenticate: Bearer resource_metadata="<site>/.well-known/oauth-protected-resource"`
 * and the gateway's `{error:{code,message}}` (the code the API route would give: `unauthenticated`,
 * `invalid-token`, `token-revoked`). An MCP client waits for exactly that HTTP 401 before it asks for
 * credentials; a 401 inside a tool result would never reach it. Everything else on the connection (the
 * handshake, tools/list, the public tools) needs no token — but a token that is sent is checked on every
 * request, and an invalid one is the same 401, as the spec asks.
 *
 * The metadata document (RFC 9728) names this resource, the auth host as the place credentials come
 * from, the header as the one way to send them, and the page saying how a person issues a PAT. The
 * gateway issues PATs, not OAuth tokens: there is no authorization-code flow to run.
 */
import type { Context } from 'koa';
import { GatewayError } from '../errors.js';
import type { HostName } from '../config/types.js';
import type { Store } from '../store/store.js';
import { bearerToken } from '../http/bearer.js';
import { resolveToken } from '../auth/token.js';
import { findTool } from './dispatch.js';

export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** RFC 9728 protected-resource metadata of the site's MCP server. */
export function protectedResourceMetadata(origins: Record<HostName, string>): Record<string, unknown> {
  return {
    resource: origins.site,
    resource_name: 'portcullis MCP server',
    authorization_servers: [origins.auth],
    bearer_methods_supported: ['header'],
    resource_documentation: `${origins.site}/docs/agents.md`,
  };
}

/** True when a JSON-RPC message (or any message of a batch) calls a tool that needs a PAT. */
export function callsPatTool(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => {
    if (!m || typeof m !== 'object') return false;
    const { method, params } = m as { method?: unknown; params?: { name?: unknown } };
    return method === 'tools/call' && typeof params?.name === 'string' && findTool(params.name)?.auth === 'pat';
  });
}

/**
 * Lets the request on, or throws the 401 with its challenge set. The token is checked the way the API
 * route checks it (shape, checksum, store, revocation); the route checks it again when the tool runs.
 */
export async function admitMcpRequest(ctx: Context, store: Store, origins: Record<HostName, string>, body: unknown): Promise<void> {
  // A request that sends a credential has it checked whatever it asks (the spec: an invalid token is a
  // 401); one that sends none needs one only to call a PAT tool.
  if (!ctx.get('authorization') && !callsPatTool(body)) return;
  const token = bearerToken(ctx);
  try {
    if (token === null && ctx.get('authorization')) throw new GatewayError('invalid-token', 'send the PAT as Authorization: Bearer <PAT>');
    await resolveToken(store, token);
  } catch (err) {
    if (err instanceof GatewayError && err.status === 401) {
      // RFC 6750: no error attribute when no credential was sent; invalid_token when one was and failed.
      const error = ctx.get('authorization') ? ', error="invalid_token"' : '';
      ctx.set('www-authenticate', `Bearer resource_metadata="${origins.site}${RESOURCE_METADATA_PATH}"${error}`);
    }
    throw err;
  }
}
