/**
 * A real stripe-mock (Stripe's own mock of its API) for a suite: the binary that scripts/setup.sh built
 * into its pinned tools dir, on a free loopback port, stopped with the suite. Nothing of Stripe is mocked by
 * hand: the gateway's `stripe` client talks HTTP to this process. It answers from Stripe's OpenAPI
 * fixtures and keeps no state (a created object is not retrievable with what was sent).
 *
 * `signedEvent` signs a webhook payload the way Stripe does, with the `stripe` package's test-header helper.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { pinnedTool, startToolServer } from './tool-server.js';

export const WEBHOOK_SECRET = 'whsec_test_portcullis';

export interface StripeMock {
  /** `http://127.0.0.1:<port>`, for STRIPE_API_BASE */
  url: string;
  /** The environment a gateway needs to use it. */
  env: Record<string, string>;
  /** With `record`: every API request the gateway made, in order (the form body decoded to flat keys). */
  requests(): Array<{ method: string; path: string; form: Record<string, string> }>;
  stop(): Promise<void>;
}

/**
 * A pass-through in front of stripe-mock that writes down what the gateway sent: stripe-mock keeps no
 * state and echoes little, so this is how a test sees the parameters of a create call. It forwards every
 * request unchanged and returns stripe-mock's answer unchanged.
 */
async function recorder(
  target: string,
): Promise<{ url: string; log: Array<{ method: string; path: string; form: Record<string, string> }>; close(): Promise<void> }> {
  const log: Array<{ method: string; path: string; form: Record<string, string> }> = [];
  const forward = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    log.push({ method: req.method!, path: req.url!, form: Object.fromEntries(new URLSearchParams(body)) });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
    const answer = await fetch(`${target}${req.url}`, { method: req.method!, headers, ...(req.method === 'GET' || req.method === 'DELETE' ? {} : { body }) });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  };
  // A forward that fails ends the connection, so the client under test sees the failure.
  const server = createServer((req, res) => void forward(req, res).catch((err: Error) => res.destroy(err)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, log, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export async function startStripeMock(opts: { record?: boolean } = {}): Promise<StripeMock> {
  // Given an HTTP address only, stripe-mock also listens for HTTPS on its default port 12112 on every
  // interface; a second private loopback port keeps parallel suites (and machines) apart.
  const server = await startToolServer(
    'stripe-mock',
    pinnedTool('stripe-mock', 'STRIPE_MOCK_VERSION'),
    ([port, tlsPort]) => ['-http-addr', `127.0.0.1:${port}`, '-https-addr', `127.0.0.1:${tlsPort}`],
    { ports: 2 },
  );
  const rec = opts.record ? await recorder(`http://127.0.0.1:${server.ports[0]}`) : null;
  const url = rec?.url ?? `http://127.0.0.1:${server.ports[0]}`;
  return {
    url,
    env: { STRIPE_SECRET_KEY: 'sk_test_portcullis', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: url },
    requests: () => [...(rec?.log ?? [])],
    async stop() {
      await rec?.close();
      await server.stop();
    },
  };
}

const signer = new Stripe('sk_test_signer');
let n = 0;

/** A Stripe event envelope around `object`, created now (or at `created`, epoch seconds). */
export function event(type: string, object: Record<string, unknown>, opts: { id?: string; created?: number } = {}): Record<string, unknown> {
  return {
    id: opts.id ?? `evt_test_${process.pid}_${Date.now().toString(36)}_${n++}`,
    object: 'event',
    api_version: '2026-10-28.endive',
    created: opts.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
  };
}

/** POSTs an event to the gateway's webhook, signed with `secret` at `timestamp` (epoch seconds). */
export async function deliver(
  apiUrl: string,
  evt: Record<string, unknown> | string,
  opts: { secret?: string; timestamp?: number; signature?: string | null } = {},
): Promise<{ status: number; body: any }> {
  const payload = typeof evt === 'string' ? evt : JSON.stringify(evt);
  const header =
    opts.signature === null
      ? null
      : (opts.signature ??
        signer.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET, ...(opts.timestamp ? { timestamp: opts.timestamp } : {}) }));
  const res = await fetch(`${apiUrl}/v1/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header ? { 'stripe-signature': header } : {}) },
    body: payload,
  });
  return { status: res.status, body: await res.json() };
}
