/**
 * Load: a client flooding the graph host does not stall the other hosts. The flood (test/helpers/
 * graph-flood.ts, in its own process) keeps twice the graph host's capacity in flight (it holds
 * graph.workers + graph.queue calls; each answered call is sent again at once, each from a new address, so
 * no per-address limit helps), all of the costliest kind: a search that ranks thousands of entries for a
 * one-entry answer, so its cost is the walk, not the reply. The host is saturated the whole time, which the
 * client sees: calls beyond its capacity are refused 503 `tool-busy`.
 *
 * Meanwhile the API, sign-in, console and site hosts are asked one request after another, and each must
 * answer as it does idle. What is counted, not timed: how many of the flood's walks the graph host ran while
 * those requests were answered. With the walks in worker threads the event loop every host shares stays
 * free, so the other hosts answer many requests for each walk. With the walks on that loop (as before the
 * worker threads), each request waits for the walks ahead of it: the graph host runs at least as many walks
 * as the other hosts answer requests. Measured on a shared 2-core machine: 8 walks for the 40 requests; 184
 * with the walks run on the event loop instead of the pool (and some flood calls then failed 503
 * store-unavailable, the store's client starved).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startWorld, type World } from '../helpers/world.js';
import { configRoot, editFile, REPO } from '../helpers/gateway.js';

const WORKERS = 1;
const QUEUE = 2;
/** Requests sent to the other hosts while the flood runs. */
const ASKED = 40;
// About 50 ms of a worker's time per call on a quiet machine, for a one-entry answer.
const HEAVY = {
  q: 'attack system user data file code access memory input network control server web application software product '.repeat(3).slice(0, 256),
  limit: 1,
};

interface Counts {
  ran: number;
  busy: number;
  other: number;
  sample: string | null;
}

describe('a client flooding the graph host does not stall the other hosts', function () {
  this.timeout(120_000);
  let w: World;
  before(async () => {
    const root = configRoot();
    editFile(root, 'config/gateway.yaml', (t) =>
      t
        .replace('failedAuthPerAddress: 30', 'failedAuthPerAddress: 30\n  addressHeader: x-forwarded-for')
        .replace(/^graph:\n(?: {2}.*\n)+/m, `graph:\n  workers: ${WORKERS}\n  queue: ${QUEUE}\n  callMs: 60000\n`),
    );
    w = await startWorld({ root });
  });
  after(() => w.stop());

  it('answers API, sign-in, console and site requests while the saturated graph host runs far fewer walks than they number', async () => {
    const flood = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO, 'test/helpers/graph-flood.ts'), w.gw.urls.graph, String(2 * (WORKERS + QUEUE)), JSON.stringify(HEAVY)],
      {
        cwd: REPO,
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const exited = once(flood, 'exit');
    const lines = createInterface({ input: flood.stdout })[Symbol.asyncIterator]();
    /** The flood's answers so far, as its own process counted them when asked. */
    const count = async (): Promise<Counts> => {
      flood.stdin.write('count\n');
      const next = await lines.next();
      if (next.done) throw new Error('the flood process ended');
      return JSON.parse(next.value) as Counts;
    };
    try {
      // Saturated: the graph host has run a round of walks and refused calls beyond its capacity.
      let at = await count();
      while (at.ran < WORKERS + QUEUE || at.busy === 0) {
        expect(at.other, at.sample ?? '').to.equal(0);
        await new Promise((r) => setImmediate(r));
        at = await count();
      }
      const asks: Array<[string, string, RequestInit]> = [
        [w.gw.urls.api, '/v1/models', {}],
        [
          w.gw.urls.auth,
          '/v1/passkey/login/options',
          { method: 'POST', headers: { 'content-type': 'application/json', origin: w.gw.origins.console }, body: '{}' },
        ],
        [w.gw.urls.console, '/readyz', {}],
        [w.gw.urls.site, '/mcp.json', {}],
      ];
      const answers: string[] = [];
      for (let i = 0; i < ASKED; i++) {
        const [base, path, init] = asks[i % asks.length]!;
        const res = await fetch(`${base}${path}`, init);
        await res.arrayBuffer();
        answers.push(`${path} ${res.status}`);
      }
      const end = await count();
      const during = { ran: end.ran - at.ran, busy: end.busy - at.busy };
      const summary = `the graph host ran ${during.ran} walks and refused ${during.busy} calls while the other hosts answered ${ASKED} requests; flood ${JSON.stringify(end)}`;
      expect(
        answers.filter((a) => !a.endsWith(' 200')),
        summary,
      ).to.deep.equal([]);
      expect(end.other, summary).to.equal(0);
      // Still saturated while the other hosts were asked, and they were not waiting on its walks.
      expect(during.busy, summary).to.be.greaterThan(0);
      expect(during.ran, summary).to.be.below(ASKED / 2);
      console.log(`      ${summary}`);
    } finally {
      flood.stdin.end();
      await exited;
    }
  });
});
