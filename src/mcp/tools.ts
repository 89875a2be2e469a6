/**
 * The agent tools, one table: each tool's name, input schema (the JSON Schema its HTTP route validates
 * with), the route it stands for and how its arguments become that route's request. The site MCP server
 * (site-server.ts), /mcp.json and /v1/control-plane (discovery/profile.ts) are all rendered from it, so a
 * tool cannot be listed in one place with a different shape or route than it has in another.
 */
import { chatRequestSchema, jobRequestSchema } from '../openai/chat-schema.js';
import { knowledgeContextSchema, knowledgeSearchSchema } from '../knowledge/schemas.js';

export type ToolAuth = 'public' | 'pat';

export interface AgentTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  method: 'GET' | 'POST';
  path: string;
  /** `pat`: the connection's `Authorization: Bearer <PAT>` is passed to the route (a browser session works on the plain-HTTP route too). */
  auth: ToolAuth;
  /** Served as a tool on {site_url}/mcp. */
  mcp: boolean;
  /** Listed as a plain-HTTP tool in /mcp.json. */
  plainHttp: boolean;
  /** Request headers the plain-HTTP route needs besides auth, with what goes in them. */
  headers?: Record<string, string>;
  readOnly: boolean;
}

const noArguments = { type: 'object', additionalProperties: false, properties: {} } as const;

export const AGENT_TOOLS: readonly AgentTool[] = [
  {
    name: 'svc_knowledge_search',
    title: 'Search security knowledge',
    description:
      'Ranked full-text search over MITRE CWE, CAPEC references, MITRE ATT&CK Enterprise and the CISA KEV catalog. Answers {object, query, total, offset, limit, data: [{id, kind, title, snippet, score}]}.',
    inputSchema: knowledgeSearchSchema,
    method: 'GET',
    path: '/v1/knowledge/search',
    auth: 'public',
    mcp: true,
    plainHttp: true,
    readOnly: true,
  },
  {
    name: 'svc_knowledge_context',
    title: 'One knowledge entry with its relations',
    description:
      'The full text of one entry (CWE-89, CAPEC-66, CVE-..., T1190, M1048) and its typed relations (child-of, related-attack-pattern, observed-example, weakness, mitigates, subtechnique-of, ...).',
    inputSchema: knowledgeContextSchema,
    method: 'GET',
    path: '/v1/knowledge/context',
    auth: 'public',
    mcp: true,
    plainHttp: true,
    readOnly: true,
  },
  {
    name: 'svc_models',
    title: 'The model catalog',
    description: 'GET /v1/models: every model with its team, route and availability. The catalog is authoritative for which models exist.',
    inputSchema: noArguments,
    method: 'GET',
    path: '/v1/models',
    auth: 'public',
    mcp: true,
    plainHttp: false,
    readOnly: true,
  },
  {
    name: 'svc_research_status',
    title: "Research status of the connection's principal",
    description:
      "GET /v1/research/status with the connection's PAT: {status, reason, freeTier, trust, scopes}. On `verification-required` a person must verify (POST /v1/research/ekyc/start returns the URL).",
    inputSchema: noArguments,
    method: 'GET',
    path: '/v1/research/status',
    auth: 'pat',
    mcp: true,
    plainHttp: false,
    readOnly: true,
  },
  {
    name: 'svc_chat_completion',
    title: 'Chat completion (OpenAI shape)',
    description:
      "POST /v1/chat/completions with the connection's PAT: the same admission, guardrails, metering and signed receipt as the HTTP route. Answers an OpenAI chat.completion plus billing, receiptId, usage and chargedMicroUSD. Tool calls are returned to you; run them yourself.",
    inputSchema: chatRequestSchema,
    method: 'POST',
    path: '/v1/chat/completions',
    auth: 'pat',
    mcp: true,
    plainHttp: true,
    readOnly: false,
  },
  {
    name: 'svc_research_run',
    title: 'Start a research job',
    description: 'POST /v1/research/jobs: starts long work as an asynchronous job (202 with jobId); poll GET /v1/research/job?jobId=<id> until 200.',
    inputSchema: jobRequestSchema,
    method: 'POST',
    path: '/v1/research/jobs',
    auth: 'pat',
    mcp: false,
    plainHttp: true,
    headers: { 'idempotency-key': 'a UUID v4 you generate per distinct job; resending the same body with it re-attaches' },
    readOnly: false,
  },
];

export const MCP_TOOLS = AGENT_TOOLS.filter((t) => t.mcp);

/** How a tool call's arguments become its route's request: query parameters for GET, the JSON body for POST. */
export function toRequest(tool: AgentTool, args: Record<string, unknown>): { url: string; body?: string } {
  if (tool.method === 'POST') return { url: tool.path, body: JSON.stringify(args) };
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) {
    // Non-scalar values are passed as JSON text, so the route refuses them by name rather than seeing "[object Object]".
    qs.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  const q = qs.toString();
  return { url: q ? `${tool.path}?${q}` : tool.path };
}
