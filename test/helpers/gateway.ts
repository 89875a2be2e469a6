/**
 * A gateway for tests, started in-process on free ports from a private copy of catalog/, rules/ and config/
 * (so a test may edit its configuration without touching the repository's), with the routes pointed at a
 * recording upstream through the same environment overrides an operator uses.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startGateway, type Gateway } from '../../src/server.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { HOST_NAMES } from '../../src/config/types.js';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** Every listener on a free port: tests never bind a fixed one (several suites and machines share ports). */
export const FREE_PORTS: Record<string, string> = Object.fromEntries(
  ['PORT', ...HOST_NAMES.map((h) => `PORTCULLIS_${h.toUpperCase()}_PORT`)].map((name) => [name, '0']),
);

/**
 * The roots made here, removed when the test process exits: each holds a copy of rules/ (several MB of intent
 * heads), and a run starts hundreds of gateways, so roots left behind filled a machine's disk. Removed at exit,
 * not when a gateway closes, since a test may restart a gateway on the same root or read it afterwards.
 */
const roots: string[] = [];
process.once('exit', () => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Copies the configuration folders into a fresh temporary root. */
export function configRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'portcullis-'));
  roots.push(root);
  for (const dir of ['catalog', 'rules', 'config']) cpSync(join(REPO, dir), join(root, dir), { recursive: true });
  return root;
}

/** Rewrites one YAML file of a root with a string transformation. */
export function editFile(root: string, file: string, edit: (text: string) => string): void {
  const path = join(root, file);
  writeFileSync(path, edit(readFileSync(path, 'utf8')));
}

export interface TestGateway extends Gateway {
  root: string;
  admin(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** A new principal with a fresh token; `rung` grants a rung first. */
  principal(opts?: { rung?: string; tenant?: string }): Promise<{ id: string; token: string; tokenId: string }>;
  chat(token: string | null, body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
}

/** The data key test gateways share (32 bytes, base64). */
export const TEST_DATA_KEY = `test:${Buffer.alloc(32, 7).toString('base64')}`;

export interface TestGatewayOptions {
  upstreamUrl?: string;
  redisUrl?: string;
  root?: string;
  env?: Record<string, string>;
  /** The meter's clock (epoch ms), to cross a UTC midnight or expire reservations without waiting. */
  now?: () => number;
  /** Where the gateway logs (default: nowhere), for tests that assert what is logged. */
  log?: Logger;
}

/**
 * Every test client is one address (127.0.0.1) that signs up and signs in far more than a person would:
 * the per-address limits on what a stranger can create are raised for a test gateway, unless the test set
 * its own value (then the shipped one is no longer there to replace). test/app/stranger-limits.test.ts
 * holds the shipped ones to account.
 */
export function relaxStrangerLimits(yaml: string): string {
  return yaml
    .replace(/^ {2}mcpPerAddress: 120$/m, '  mcpPerAddress: 1000000')
    .replace(/^ {2}challengesPerAddress: 30$/m, '  challengesPerAddress: 1000000')
    .replace(/^ {2}staticPerAddress: 30$/m, '  staticPerAddress: 1000000')
    .replace(/^ {2}signUpsPerAddressHour: 10$/m, '  signUpsPerAddressHour: 1000000')
    .replace(/^ {2}applicationsPerAccountDay: 10$/m, '  applicationsPerAccountDay: 1000000');
}

export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const root = opts.root ?? configRoot();
  editFile(root, 'config/gateway.yaml', (t) => relaxStrangerLimits(t.replace('bootstrap: true', 'bootstrap: false')));
  const env: Record<string, string> = {
    ...FREE_PORTS,
    PORTCULLIS_ADMIN_TOKEN: 'test-operator-token',
    // Every gateway of a test world shares one data key, as a deployment's do (src/data-key).
    PORTCULLIS_DATA_KEY: TEST_DATA_KEY,
    ...(opts.upstreamUrl ? { PORTCULLIS_ROUTE_SHARED_URL: opts.upstreamUrl, PORTCULLIS_ROUTE_DEDICATED_URL: opts.upstreamUrl } : {}),
    ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl } : {}),
    ...opts.env,
  };
  const gw = await startGateway({ root, env, log: opts.log ?? silentLogger, ...(opts.now ? { now: opts.now } : {}) });
  const admin: TestGateway['admin'] = async (method, path, body) => {
    const res = await fetch(`${gw.adminUrl}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${gw.adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  let n = 0;
  return Object.assign(gw, {
    root,
    admin,
    async principal(o: { rung?: string; tenant?: string } = {}) {
      const p = await admin('POST', '/principals', { tenant: o.tenant ?? `t${process.pid}-${Date.now().toString(36)}-${n++}` });
      if (p.status !== 201) throw new Error(`principal create failed: ${JSON.stringify(p.body)}`);
      const id = p.body.id as string;
      if (o.rung) {
        const g = await admin('POST', `/principals/${encodeURIComponent(id)}/rung`, { rung: o.rung });
        if (g.status !== 200) throw new Error(`grant failed: ${JSON.stringify(g.body)}`);
      }
      const t = await admin('POST', `/principals/${encodeURIComponent(id)}/tokens`, { label: 'test' });
      return { id, token: t.body.token as string, tokenId: t.body.id as string };
    },
    async chat(token: string | null, body: unknown, headers: Record<string, string> = {}) {
      const res = await fetch(`${gw.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* streams and non-JSON bodies are returned as text */
      }
      return { status: res.status, body: parsed, headers: res.headers };
    },
  });
}
