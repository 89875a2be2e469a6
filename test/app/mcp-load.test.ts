/**
 * Load: the API host's latency while the MCP hosts are abused (test/helpers/mcp-abuser.ts, in its own
 * process). Four clients keep the graph host busy with its heaviest queries (eight at a time each, every
 * request from a new address behind the proxy, so no per-address limit helps: only the worker threads and
 * the bounded queue keep the walks off the shared event loop), send 100-call batches, and hammer the site
 * host's search tool from one address (its per-address limits bound that). Meanwhile GET /v1/models is timed one request after another; its median stays within a generous
 * factor of the same median measured idle. Before the graph queries ran in worker threads the median went
 * from about 2 ms to seconds.
 */
import { expect } from 'chai';
import { startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile, REPO } from '../helpers/gateway.js';
import { spawn } from 'node:child_process';
import { on, once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

// Generous: the machine running the tests is shared, and the abuser's own CPU competes with the gateway's.
const FACTOR = 20;
const SAMPLES = 60;

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const call = (id: number, name: string, args: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

describe('MCP abuse does not slow the API host', function () {
  this.timeout(120_000);
  let w: World;
  before(async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t.replace('failedAuthPerAddress: 30', 'failedAuthPerAddress: 30\n  addressHeader: x-forwarded-for').replace('mcpPerAddress: 120', 'mcpPerAddress: 20'),
    );
    w = await startWorld({ root });
  });
  after(() => w.stop());

  async function apiMedian(): Promise<number> {
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      const res = await fetch(`${w.gw.apiUrl}/v1/models`, { headers: { 'x-forwarded-for': `10.9.${i % 250}.1` } });
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      expect(res.status).to.equal(200);
    }
    return median(times);
  }

  it('GET /v1/models keeps its median within a small factor of idle while the graph and site hosts are abused', async () => {
    // Warm: the catalog route, the graph host's worker (it loads the knowledge), the site's search.
    await apiMedian();
    const warm = await fetch(`${w.gw.urls.graph}/mcp`, { method: 'POST', headers: HEADERS, body: JSON.stringify(call(0, 'graph_get_node', { id: 'CWE-89' })) });
    expect(((await warm.json()) as any).result.structuredContent.id).to.equal('CWE-89');
    const idle = await apiMedian();

    // The abuse, from its own process; timing starts once the graph host has answered some of it.
    const abuser = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/helpers/mcp-abuser.ts'), w.gw.urls.graph, w.gw.urls.site], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let counts: Record<string, number> = {};
    const lines = createInterface({ input: abuser.stdout });
    lines.on('line', (line) => (counts = JSON.parse(line)));
    let abused: number;
    try {
      // Timing starts once the graph host has answered some of the abuse and the site's hammering has
      // reached its per-address limit, so both abuses are in full swing while the API is timed (the API's
      // 60 samples can take less time than the site abuser needs to reach its limit).
      for await (const line of on(lines, 'line')) {
        const seen = JSON.parse(String(line[0])) as Record<string, number>;
        if ((seen['graph'] ?? 0) >= 16 && (seen['limited'] ?? 0) > 0) break;
      }
      abused = await apiMedian();
    } finally {
      // Ended and awaited, with its output closed, so neither the process nor its pipe outlives the test.
      const exited = once(abuser, 'close');
      abuser.kill();
      lines.close();
      await exited;
    }
    const answered = counts;
    // The ratio is taken over at least 5 ms of idle: a 1 ms idle median on a quiet loopback would make a
    // machine's own scheduling noise look like a stall. Before the bounds the API's median went to 672 ms.
    const ratio = abused / Math.max(idle, 5);
    expect(ratio, `idle ${idle.toFixed(2)} ms, abused ${abused.toFixed(2)} ms, ${JSON.stringify(answered)}`).to.be.below(FACTOR);
    expect(answered['batchRefused']).to.be.greaterThan(0);
    expect(answered['batchRun']).to.equal(0);
    expect(answered['limited'], 'the site abuser met its per-address limit').to.be.greaterThan(0);
    console.log(`      idle p50 ${idle.toFixed(2)} ms, under abuse ${abused.toFixed(2)} ms (x${ratio.toFixed(2)}); ${JSON.stringify(answered)}`);
  });
});
