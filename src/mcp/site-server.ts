/**
 * The site MCP server ({site_url}/mcp): the agent tools of tools.ts over the official SDK's low-level
 * `Server`, so each tool's input schema is our JSON Schema as it is (no second schema language). A tool
 * call is answered by the matching API route (dispatch.ts): its body as `structuredContent.body`, its HTTP
 * status as `structuredContent.status`, the body as JSON text in `content`, and `isError` when the status
 * is 4xx/5xx. A PAT tool called without a valid PAT never gets here: it is an HTTP 401 (auth.ts); a
 * route's own later 401 comes back as the tool's `{status: 401, body: {error: {code: ...}}}`.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { callRoute, findTool, type NodeHandler } from './dispatch.js';
import { MCP_TOOLS } from './tools.js';
import { SERVER_INFO } from './server-info.js';

const INSTRUCTIONS =
  'Security-research inference and public security knowledge. svc_knowledge_search, svc_knowledge_context and svc_models need no credential; ' +
  "svc_research_status and svc_chat_completion use the connection's Authorization: Bearer <PAT>, issued by your account holder. " +
  'Every result carries the HTTP status and body of the matching API route. A PAT tool called without a valid PAT is an HTTP 401 whose WWW-Authenticate names the resource metadata saying how to get one.';

export function createSiteMcpServer(api: NodeHandler, remoteAddress: string): Server {
  const server = new Server({ ...SERVER_INFO, name: 'portcullis' }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, readOnlyHint: t.readOnly, openWorldHint: false, ...(t.readOnly ? { idempotentHint: true } : {}) },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const tool = findTool(req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool named ${req.params.name}`);
    const auth = extra.requestInfo?.headers['authorization'];
    const answer = await callRoute(api, tool, req.params.arguments ?? {}, { authorization: Array.isArray(auth) ? auth[0] : auth, remoteAddress });
    return {
      content: [{ type: 'text', text: typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body) }],
      structuredContent: { status: answer.status, body: answer.body },
      isError: answer.status >= 400,
    };
  });
  return server;
}
