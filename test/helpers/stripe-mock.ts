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
  stop(): Promise<void>;
}

export async function startStripeMock(): Promise<StripeMock> {
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
    const url = `http://127.0.0.1:${port}`;
    return {
      url,
      env: { STRIPE_SECRET_KEY: 'sk_test_portcullis', STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, STRIPE_API_BASE: url },
      async stop() {
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
      : (opts.signature ?? signer.webhooks.generateTestHeaderString({ payload, secret: opts.secret ?? WEBHOOK_SECRET, ...(opts.timestamp ? { timestamp: opts.timestamp } : {}) }));
  const res = await fetch(`${apiUrl}/v1/webhooks/stripe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(header ? { 'stripe-signature': header } : {}) },
    body: payload,
  });
  return { status: res.status, body: await res.json() };
}
