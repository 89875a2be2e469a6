/**
 * A separate process that floods a gateway's graph host until its stdin ends (test/app/mcp-load.test.ts):
 * `node --import tsx graph-flood.ts <graph url> <calls in flight> <tool arguments as JSON>`. It keeps that
 * many graph_search calls in flight, each answered one sent again at once, each from a new address behind
 * the proxy (so no per-address limit helps). It runs in its own process so that its own work is not done
 * on the gateway's event loop, and so that its counts are kept by a loop the gateway cannot stall: a line
 * `count` on stdin is answered at once with a JSON line of the answers so far (`ran`: the call's result,
 * `busy`: 503 tool-busy, at the door or as the tool's answer, `other`: anything else, with the first such answer in `sample`).
 */
import { createInterface } from 'node:readline';

const [graph, inFlight, args] = process.argv.slice(2) as [string, string, string];
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const counts = { ran: 0, busy: 0, other: 0 };
let sample: string | null = null;
let seq = 0;
let done = false;

async function slot(): Promise<void> {
  while (!done) {
    const id = ++seq;
    try {
      const res = await fetch(`${graph}/mcp`, {
        method: 'POST',
        headers: { ...HEADERS, 'x-forwarded-for': `172.16.${(id >> 8) & 255}.${id & 255}` },
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'graph_search', arguments: JSON.parse(args) } }),
      });
      const text = await res.text();
      // Refused at the door (HTTP 503), or by the pool once read (the tool's answer says 503 tool-busy).
      if (text.includes('"tool-busy"') || text.includes('\\"tool-busy\\"')) counts.busy++;
      else if (res.status === 200 && text.includes('"total"') && !text.includes('"isError":true')) counts.ran++;
      else {
        counts.other++;
        sample ??= `${res.status} ${text.slice(0, 300)}`;
      }
    } catch (err) {
      counts.other++;
      sample ??= String(err);
    }
  }
}

const slots = Array.from({ length: Number(inFlight) }, slot);
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line === 'count') process.stdout.write(`${JSON.stringify({ ...counts, sample })}\n`);
});
lines.on('close', () => {
  done = true;
  void Promise.all(slots).then(() => process.exit(0));
});
