/**
 * OpenTelemetry traces, on through the standard OTEL_* variables in a gateway process,
 * exported over OTLP/HTTP to a collector run by this test: the client's W3C `traceparent` is continued by a
 * server span named by the route pattern, each pipeline stage is a span, the upstream call is a client span
 * whose context reaches the upstream as `traceparent`, and no span carries a token or prompt text.
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { configRoot } from '../helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { startRecordingUpstream, type RecordingUpstream } from '../helpers/upstream.js';
import { until } from '../helpers/wait.js';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

describe('OpenTelemetry traces', function () {
  this.timeout(60_000);
  let up: RecordingUpstream;
  let gw: GatewayProcess;
  let collector: Server;
  const bodies: string[] = [];
  const spans: OtlpSpan[] = [];

  before(async () => {
    up = await startRecordingUpstream();
    collector = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        bodies.push(text);
        try {
          const doc = JSON.parse(text) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
          for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
        } catch {
          /* not JSON: the assertions below fail on the missing spans */
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
    const port = (collector.address() as { port: number }).port;
    gw = await spawnGateway(configRoot(), {
      PORTCULLIS_ADMIN_TOKEN: 'trace-operator-token',
      PORTCULLIS_ROUTE_SHARED_URL: up.baseUrl,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'portcullis-under-test',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
  });
  after(async () => {
    await gw.stop();
    await up.stop();
    collector.close();
  });

  it('continues the client trace through the stages to the upstream, and keeps secrets out of spans', async () => {
    const admin = async (path: string, payload: unknown) =>
      (await (
        await fetch(`${gw.adminUrl}/admin${path}`, {
          method: 'POST',
          headers: { authorization: 'Bearer trace-operator-token', 'content-type': 'application/json' },
          body: JSON.stringify(payload),
        })
      ).json()) as any;
    const principal = (await admin('/principals', { tenant: 'traced' })).id as string;
    const token = (await admin(`/principals/${encodeURIComponent(principal)}/tokens`, { label: 't' })).token as string;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpanId = '00f067aa0ba902b7';
    const prompt = 'trace me: hyacinth-tungsten-lagoon';
    const res = await fetch(`${gw.apiUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${clientSpanId}-01` },
      body: JSON.stringify({ model: 'shared-general-a', messages: [{ role: 'user', content: prompt }] }),
    });
    expect(res.status).to.equal(200);

    const [forwarded] = await up.requests();
    const upstreamParent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(forwarded!.headers['traceparent'] ?? '');
    expect(upstreamParent, 'traceparent sent upstream').not.to.equal(null);
    expect(upstreamParent![1]).to.equal(traceId);

    await until(() => spans.some((s) => s.name === 'POST /v1/chat/completions'), { what: "the gateway's server span at the collector" });
    const ours = spans.filter((s) => s.traceId === traceId);
    const server = ours.find((s) => s.name === 'POST /v1/chat/completions')!;
    expect(server, JSON.stringify(spans.map((s) => s.name))).to.not.equal(undefined);
    expect(server.kind).to.equal(2); // SERVER
    expect(server.parentSpanId).to.equal(clientSpanId);
    const stages = ours.filter((s) => s.name.startsWith('stage ')).map((s) => s.name);
    expect(stages).to.include.members(['stage identify', 'stage validate', 'stage admit', 'stage guard']);
    const client = ours.find((s) => s.kind === 3)!; // CLIENT
    expect(client, 'the upstream call as a client span').to.not.equal(undefined);
    expect(client.spanId).to.equal(upstreamParent![2]);
    const all = bodies.join('');
    expect(all).to.contain('portcullis-under-test');
    expect(all).not.to.contain(token);
    expect(all).not.to.contain('hyacinth-tungsten-lagoon');
    expect(all).not.to.contain(principal);
  });
});
