/**
 * A separate process that abuses a gateway's MCP hosts until it is killed (test/app/mcp-load.test.ts):
 * `node --import tsx mcp-abuser.ts <graph url> <site url>`. Four graph clients keep eight of its heaviest
 * queries in flight each, every request from a new address behind the proxy (no per-address limit helps),
 * and send a 100-call batch between rounds; one site client hammers the search tool from one address. It
 * runs in its own process so its own work is not counted against the gateway's event loop. Every second
 * it prints a line of counts (JSON) on stdout.
 */
const [graph, site] = process.argv.slice(2) as [string, string];
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const call = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
const HEAVY: Array<[string, unknown]> = [
  ['graph_search', { q: 'a the of and input', limit: 50 }],
  ['graph_neighbours', { id: 'CWE-20', depth: 3, direction: 'both', limit: 200 }],
  ['graph_shortest_path', { from: 'M1048', to: 'CWE-1004', maxDepth: 8 }],
];
const counts = { graph: 0, busy: 0, batchRefused: 0, batchRun: 0, site: 0, limited: 0 };
let seq = 0;

async function post(url: string, body: unknown, from: string): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...HEADERS, 'x-forwarded-for': from }, body: JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  } catch {
    return { status: 0, text: '' };
  }
}

async function graphClient(n: number): Promise<never> {
  for (;;) {
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const [name, args] = HEAVY[(seq + i) % HEAVY.length]!;
        const r = await post(graph, call(++seq, name, args), `172.16.${n}.${seq % 250}`);
        if (r.text.includes('tool-busy')) counts.busy++;
        else counts.graph++;
      }),
    );
    const batch = await post(
      graph,
      Array.from({ length: 100 }, (_, i) => call(i, 'graph_search', { q: 'input' })),
      `172.17.${n}.1`,
    );
    if (batch.status === 400) counts.batchRefused++;
    else if (batch.status === 200) counts.batchRun++;
  }
}

async function siteClient(): Promise<never> {
  for (;;) {
    const r = await post(site, call(++seq, 'svc_knowledge_search', { q: 'a the of and input', limit: 50 }), '172.18.0.1');
    if (r.status === 429 || r.text.includes('"status":429')) counts.limited++;
    else counts.site++;
  }
}

setInterval(() => process.stdout.write(`${JSON.stringify(counts)}\n`), 1_000);
void Promise.all([0, 1, 2, 3].map(graphClient).concat([siteClient()]));
