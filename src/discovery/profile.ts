/**
 * The service-discovery profile, one source for GET {base_url}/v1/control-plane and GET {site_url}/mcp.json
 * (and /.well-known/mcp.json): every host's public origin, the API version, the wires offered and refused,
 * the auth methods per route class, the MCP endpoints and their tools (from mcp/tools.ts), the versions of
 * catalog, rules, policy and knowledge data, and the receipt key id. Built per request from the live
 * runtime, so a reload shows at once; origins come from the listeners' configuration.
 */
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../app/deps.js';
import type { Knowledge } from '../knowledge/index.js';
import { AGENT_TOOLS, MCP_TOOLS } from '../mcp/tools.js';
import { GRAPH_TOOLS } from '../mcp/graph-server.js';
import { SERVER_INFO } from '../mcp/server-info.js';
import { receiptKey } from './receipt-key.js';

/** What these routes use of the gateway's parts, and nothing more. */
export type ProfileDeps = Pick<Deps, 'holder' | 'origins' | 'receipts'>;

export const API_VERSION = 'v1';

export function siteEntryPoints(site: string) {
  return {
    mcpJson: `${site}/mcp.json`,
    wellKnownMcpJson: `${site}/.well-known/mcp.json`,
    llmsTxt: `${site}/llms.txt`,
    llmsFullTxt: `${site}/llms-full.txt`,
    agentQuickstart: `${site}/agent-quickstart.md`,
  };
}

export function controlPlane(deps: ProfileDeps, k: Knowledge) {
  const o = deps.origins;
  const rt = deps.holder.current;
  return {
    object: 'control-plane',
    service: SERVER_INFO.name,
    serviceVersion: SERVER_INFO.version,
    apiVersion: API_VERSION,
    // The admin listener is the operator's, on loopback: it is not a public host and is not listed.
    hosts: { api: o.api, auth: o.auth, console: o.console, site: o.site, graph: o.graph },
    wires: {
      offered: [
        {
          wire: 'openai-chat-completions',
          method: 'POST',
          url: `${o.api}/v1/chat/completions`,
          stream: 'emulated: one content chunk, one finish chunk, then [DONE], first byte when complete',
        },
        { wire: 'research-jobs', method: 'POST', url: `${o.api}/v1/research/jobs`, poll: `${o.api}/v1/research/job?jobId=<uuid>` },
        { wire: 'mcp-streamable-http', method: 'POST', url: `${o.site}/mcp` },
      ],
      refused: [
        { wire: 'anthropic-messages', path: '/v1/messages', status: 405, code: 'wire-not-offered' },
        { wire: 'openai-responses', path: '/v1/responses', status: 405, code: 'wire-not-offered' },
        { wire: 'gemini', path: '/v1beta/models/{model}:generateContent', status: 405, code: 'wire-not-offered' },
      ],
    },
    auth: {
      pat: "Authorization: Bearer <PAT>; a person issues it in the console and puts it in the agent's environment",
      cookie: 'browser session from the sign-in host; same-origin POST only',
      routeClasses: [
        {
          class: 'public',
          methods: ['none'],
          routes: [
            'GET /v1/models',
            'GET /v1/secure',
            'GET /v1/billing/catalog',
            'GET /v1/security/services',
            'GET /v1/control-plane',
            'GET /v1/knowledge/search',
            'GET /v1/knowledge/context',
          ],
        },
        {
          class: 'research',
          methods: ['pat', 'cookie'],
          routes: [
            'POST /v1/chat/completions',
            'GET /v1/research/status',
            'POST /v1/research/jobs',
            'GET /v1/research/job',
            'POST /v1/research/applications',
            'POST /v1/research/ekyc/start',
            'GET /v1/research/ekyc/status',
            'GET /v1/billing/status',
          ],
        },
        { class: 'purchase', methods: ['cookie'], routes: ['POST /v1/billing/checkout', 'POST /v1/billing/portal'], note: 'a PAT is refused here (403)' },
        {
          class: 'account',
          methods: ['cookie'],
          routes: [
            'GET /v1/session',
            'POST /v1/account/api-token',
            'GET /v1/account/api-tokens',
            'POST /v1/account/api-token/revoke',
            'GET /v1/account/applications',
          ],
        },
        {
          class: 'sign-in',
          host: o.auth,
          methods: ['passkey', 'siwe', 'cacao', 'totp'],
          routes: [
            'POST /v1/passkey/{login,register}/{options,verify}',
            'POST /v1/siwe/{nonce,options,verify}',
            'POST /v1/cacao/session',
            'POST /v1/totp/verify',
          ],
        },
        {
          class: 'mcp',
          host: o.site,
          methods: ['none', 'pat'],
          routes: ['POST /mcp'],
          note: "public tools need nothing; svc_research_status and svc_chat_completion use the connection's Bearer PAT",
        },
        { class: 'graph-mcp', host: o.graph, methods: ['none'], routes: ['POST /mcp'] },
      ],
    },
    mcp: {
      site: {
        endpoint: `${o.site}/mcp`,
        transport: 'streamable-http',
        sessions: false,
        protocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        tools: MCP_TOOLS.map((t) => ({ name: t.name, auth: t.auth, route: `${t.method} ${t.path}` })),
      },
      graph: {
        endpoint: `${o.graph}/mcp`,
        transport: 'streamable-http',
        sessions: false,
        protocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
        tools: GRAPH_TOOLS.map((t) => ({ name: t.name, auth: 'public' as const })),
      },
    },
    entryPoints: siteEntryPoints(o.site),
    versions: {
      catalog: rt.versions.catalog,
      rules: rt.versions.rules,
      policy: rt.versions.policy,
      guardrails: rt.versions.guardrails,
      firewall: rt.versions.firewall,
      compliance: rt.versions.compliance,
      billing: rt.versions.billing,
      config: rt.versions.config,
      knowledge: k.versions,
    },
    knowledge: { nodes: k.stats.nodes, edges: k.stats.edges },
    receipts: receiptKey(deps),
  };
}

/** /mcp.json: the machine-readable map an agent starts from; a view of the same profile. */
export function mcpMap(deps: ProfileDeps, k: Knowledge) {
  const profile = controlPlane(deps, k);
  const o = deps.origins;
  return {
    name: profile.service,
    version: profile.serviceVersion,
    description:
      'Security-research inference (OpenAI-compatible chat completions) and public security knowledge (MITRE CWE, CAPEC references, MITRE ATT&CK, CISA KEV).',
    mcpServers: {
      [profile.service]: {
        type: 'streamable-http',
        url: profile.mcp.site.endpoint,
        tools: profile.mcp.site.tools,
        auth: 'optional Authorization: Bearer <PAT> for the pat tools',
      },
      [`${profile.service}-graph`]: { type: 'streamable-http', url: profile.mcp.graph.endpoint, tools: profile.mcp.graph.tools, auth: 'none' },
    },
    tools: AGENT_TOOLS.filter((t) => t.plainHttp).map((t) => ({
      name: t.name,
      description: t.description,
      method: t.method,
      url: `${o.api}${t.path}`,
      auth: t.auth === 'public' ? 'none' : 'Authorization: Bearer <PAT> (or a browser session); red-team models need a verified principal',
      ...(t.method === 'GET' ? { parameters: 'query string' } : { body: 'application/json' }),
      ...(t.headers ? { headers: t.headers } : {}),
      inputSchema: t.inputSchema,
    })),
    controlPlane: `${o.api}/v1/control-plane`,
    securityServices: `${o.api}/v1/security/services`,
    models: `${o.api}/v1/models`,
    docs: { llmsTxt: profile.entryPoints.llmsTxt, llmsFullTxt: profile.entryPoints.llmsFullTxt, agentQuickstart: profile.entryPoints.agentQuickstart },
    apiVersion: profile.apiVersion,
  };
}
