/**
 * Running a tool call through the API app itself, in process: the request is injected into the API
 * listener's own Koa handler (light-my-request), so a tool call passes exactly the stages, admission,
 * guardrails, metering and receipt of the HTTP route, and answers exactly its status and body. There is
 * no second implementation of any route to drift from the first.
 */
import inject from 'light-my-request';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AGENT_TOOLS, toRequest, type AgentTool } from './tools.js';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface RouteAnswer {
  status: number;
  /** The parsed JSON body, or the text (an SSE stream, for `stream: true`). */
  body: unknown;
  contentType: string | null;
}

/** Who is calling, as the API route should see them: the MCP request's credential and address. */
export interface Caller {
  authorization: string | undefined;
  /** The MCP client's address, so anything the API keys by address sees the client, not this process. */
  remoteAddress: string;
}

export async function callRoute(api: NodeHandler, tool: AgentTool, args: Record<string, unknown>, caller: Caller): Promise<RouteAnswer> {
  const { authorization } = caller;
  const { url, body } = toRequest(tool, args);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  // Only the PAT tools carry the connection's credential; a public tool never passes one on.
  if (tool.auth === 'pat' && authorization) headers['authorization'] = authorization;
  const res = await inject(api, { method: tool.method, url, headers, ...(body !== undefined ? { payload: body } : {}), remoteAddress: caller.remoteAddress });
  const contentType = (res.headers['content-type'] as string | undefined) ?? null;
  let parsed: unknown = res.payload;
  if (contentType?.startsWith('application/json')) {
    try {
      parsed = JSON.parse(res.payload);
    } catch {
      /* left as text: the route said JSON and sent something else, which the client should see as it is */
    }
  }
  return { status: res.statusCode, body: parsed, contentType };
}

export function findTool(name: string): AgentTool | undefined {
  return AGENT_TOOLS.find((t) => t.mcp && t.name === name);
}
