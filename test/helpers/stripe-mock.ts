/**
 * A real stripe-mock (Stripe's own mock of its API) for a suite: the binary that scripts/setup.sh built
 * into its pinned tools dir, on a free loopback port, stopped with the suite. Nothing of Stripe is mocked by
 * hand: the gateway's `stripe` client talks HTTP to this process. It answers from Stripe's OpenAPI
 * fixtures and keeps no state (a created object is not retrievable with what was sent).
 *
 * `signedEvent` signs a webhook payload the way Stripe does, with the `stripe` package's test-header helper.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { freePort } from './ports.js';
import { REPO } from './gateway.js';

export const WEBHOOK_SECRET = 'whsec_test_portcullis';

function binary(): string {
  const env = readFileSync(join(REPO, 'scripts/tools.env'), 'utf8');
  const version = /^STRIPE_MOCK_VERSION=(\S+)/m.exec(env)?.[1];
  const dir = process.env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools');
  const path = join(dir, `stripe-mock-${version}`, 'stripe-mock');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run setup\` (scripts/setup.sh builds stripe-mock)`);
  return path;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

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
  const bin = binary();
  for (let attempt = 0; ; attempt++) {
    const [port, tlsPort] = [await freePort(), await freePort()];
    // Given an HTTP address only, stripe-mock also listens for HTTPS on its default port 12112 on every
    // interface; a second private loopback port keeps parallel suites (and machines) apart.
    const child: ChildProcess = spawn(bin, ['-http-addr', `127.0.0.1:${port}`, '-https-addr', `127.0.0.1:${tlsPort}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const keep = (c: Buffer) => void (log = (log + c.toString()).slice(-4000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let exited = false;
    child.once('exit', () => void (exited = true));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline && !(await accepts(port))) await new Promise((r) => setTimeout(r, 50));
    if (exited || Date.now() >= deadline) {
      child.kill('SIGKILL');
      if (attempt < 3 && /address already in use/.test(log)) continue;
      throw new Error(`stripe-mock did not start:\n${log}`);
    }
    const rec = opts.record ? await recorder(`http://127.0.0.1:${port}`) : null;
    const url = rec?.url ?? `http://127.0.0.1:${port}`;
    return {
      url,
      env: { STRIPE_SECRET_KEY: 'sk_test_portcullis', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: url },
      requests: () => [...(rec?.log ?? [])],
      async stop() {
        await rec?.close();
        if (child.exitCode !== null || child.signalCode !== null) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      },
    };
  }
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
