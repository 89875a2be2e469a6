/**
 * The graph MCP server ({graph_url}/mcp): the same evidence as the knowledge routes, as a graph (nodes =
 * entries, edges = typed relations). Public and read-only; every walk is bounded (knowledge/graph.ts).
 * A result's `structuredContent` is the answer; a refused call (bad arguments, unknown id) is `isError`
 * with `{error: {code, message}}` from the one error table, as an HTTP route would answer it.
 *
 * The walks run where `run` puts them: the graph host gives them to worker threads (graph-pool.ts), each
 * call within `graph.callMs`, so no query on this host holds the event loop the other hosts answer on. A
 * call past its budget, or with every worker busy and the queue full, is refused the same way
 * (`tool-call-too-long`, `tool-busy`).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, toWire } from '../errors.js';
import type { Knowledge } from '../knowledge/index.js';
import { graphNode, neighbours, shortestPath } from '../knowledge/graph.js';
import {
  graphNeighboursSchema,
  knowledgeContextSchema,
  graphPathSchema,
  knowledgeSearchSchema,
  readNeighboursArgs,
  readNodeArgs,
  readPathArgs,
  readSearchArgs,
} from '../knowledge/schemas.js';
import { SERVER_INFO } from './server-info.js';

interface GraphTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [k: string]: unknown };
  run(k: Knowledge, args: unknown): object;
}

export const GRAPH_TOOLS: readonly GraphTool[] = [
  {
    name: 'graph_search',
    title: 'Find nodes',
    description: 'Ranked full-text search for node ids to start from (the same search as svc_knowledge_search).',
    inputSchema: knowledgeSearchSchema,
    run(k, args) {
      const p = readSearchArgs(args);
      const page = k.search.search(p.q, { limit: p.limit, offset: p.offset, ...(p.kind ? { kind: p.kind } : {}) });
      return { query: p.q, total: page.total, offset: p.offset, limit: p.limit, data: page.data };
    },
  },
  {
    name: 'graph_get_node',
    title: 'Get a node',
    description: 'One node (CWE-89, CAPEC-66, CVE-..., T1190, M1048): kind, title, text, and its edge counts per type and direction.',
    // A graph node is named by the same public identifier as a knowledge entry.
    inputSchema: knowledgeContextSchema,
    run: (k, args) => graphNode(k.evidence, readNodeArgs(args).id),
  },
  {
    name: 'graph_neighbours',
    title: 'Walk neighbours',
    description:
      'Nodes reachable from a node within `depth` hops (at most 3), following only the edge `types` given (default all) in `direction` (out, in, both); at most `limit` nodes (200).',
    inputSchema: graphNeighboursSchema,
    run: (k, args) => neighbours(k.evidence, readNeighboursArgs(args)),
  },
  {
    name: 'graph_shortest_path',
    title: 'Shortest path between two ids',
    description:
      'The fewest-hop path between two nodes over edges in either direction (at most `maxDepth` hops, 8), each edge as the data states it, e.g. from a CVE through its CWE to the weakness class above it.',
    inputSchema: graphPathSchema,
    run: (k, args) => shortestPath(k.evidence, readPathArgs(args)),
  },
];

/** Runs one graph tool call (its answer, or a GatewayError thrown for a refusal). */
export type RunGraphTool = (name: string, args: unknown) => Promise<object>;

/** Runs a tool on this thread, over the process's knowledge (the worker threads' way). */
export function runHere(knowledge: () => Knowledge): RunGraphTool {
  return async (name, args) => {
    const tool = GRAPH_TOOLS.find((t) => t.name === name);
    if (!tool) throw new GatewayError('invalid-request', `no tool named ${name}`);
    return tool.run(knowledge(), args);
  };
}

export function createGraphMcpServer(run: RunGraphTool): Server {
  const server = new Server(
    { ...SERVER_INFO, name: 'portcullis-graph' },
    {
      capabilities: { tools: {} },
      instructions:
        'A read-only graph of MITRE CWE, CAPEC references, MITRE ATT&CK Enterprise and CISA KEV. Start with graph_search, then graph_get_node, graph_neighbours and graph_shortest_path.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: GRAPH_TOOLS.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = GRAPH_TOOLS.find((t) => t.name === req.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool named ${req.params.name}`);
    try {
      const answer = await run(tool.name, req.params.arguments ?? {});
      return { content: [{ type: 'text', text: JSON.stringify(answer) }], structuredContent: answer as Record<string, unknown> };
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      const wire = toWire(err);
      return { content: [{ type: 'text', text: JSON.stringify(wire) }], structuredContent: { status: err.status, ...wire }, isError: true };
    }
  });
  return server;
}
