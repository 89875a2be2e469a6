/**
 * Protocol-revision negotiation in front of the SDK's transport, for clients that speak a revision the pinned
 * SDK does not (2026-07-28 and later, whose clients probe with `server/discover` before falling back to
 * `initialize`). Two answers, both the ones the MCP specification prescribes, so a client decides from the
 * answer itself instead of from a bare HTTP error:
 * - `server/discover` is answered (200) with the revisions this server supports, its capabilities and its
 *   identity, taken from the server's own `initialize` answer. None of the revisions is a 2026 one, so a
 *   newer client reads it as a handshake-era server and goes straight to `initialize`.
 * - Any other request whose `MCP-Protocol-Version` header names a revision not supported gets 400 with the
 *   JSON-RPC error `-32022` (unsupported protocol version) and `data: {supported, requested}`, instead of
 *   the SDK's generic `-32000` text.
 * `initialize` itself is the SDK's: an unknown requested revision is answered with the newest supported one.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { SUPPORTED_PROTOCOL_VERSIONS, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

/** The MCP error code for a protocol revision the server does not support. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export interface EarlyAnswer {
  status: number;
  body: Record<string, unknown>;
}

type Message = { jsonrpc?: unknown; id?: unknown; method?: unknown };

/** The answer to give before the SDK sees the request, or undefined to let the SDK answer it. */
export async function negotiateVersion(body: unknown, header: string | undefined, build: () => Server): Promise<EarlyAnswer | undefined> {
  const single = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Message) : undefined;
  if (single?.method === 'server/discover' && single.id !== undefined) {
    return { status: 200, body: { jsonrpc: '2.0', id: single.id, result: await discover(build()) } };
  }
  const messages = Array.isArray(body) ? body : [body];
  if (header && !SUPPORTED_PROTOCOL_VERSIONS.includes(header) && !messages.some(isInitializeRequest)) {
    return {
      status: 400,
      body: {
        jsonrpc: '2.0',
        id: single && (typeof single.id === 'string' || typeof single.id === 'number') ? single.id : null,
        error: {
          code: UNSUPPORTED_PROTOCOL_VERSION,
          message: `Unsupported protocol version: ${header}`,
          data: { supported: SUPPORTED_PROTOCOL_VERSIONS, requested: header },
        },
      },
    };
  }
  return undefined;
}

/** The server's own initialize answer (over an in-process transport pair), as a `server/discover` result. */
async function discover(server: Server): Promise<Record<string, unknown>> {
  const [{ Client }, { InMemoryTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/inMemory.js'),
  ]);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'portcullis-discover', version: '1' });
  try {
    await server.connect(serverSide);
    await client.connect(clientSide);
    const instructions = client.getInstructions();
    return {
      supportedVersions: SUPPORTED_PROTOCOL_VERSIONS,
      capabilities: client.getServerCapabilities() ?? {},
      serverInfo: client.getServerVersion(),
      ...(instructions ? { instructions } : {}),
      resultType: 'complete',
    };
  } finally {
    await client.close();
    await server.close();
  }
}
