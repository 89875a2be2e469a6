/**
 * Row R3 of the bench: portcullis itself, the whole path on a real redis-server — PAT lookup, the compiled
 * policy decision, the guardrail scan, the meter's reservation, the job engine, forwarding, settlement,
 * receipt — as its own process running the built `dist/main.js`.
 *
 * The gateway is built from a snapshot, in a temporary folder, never in the repository's dist/: other
 * work goes on in the tree while the bench runs. `auto` takes the working tree when it type-checks and
 * otherwise the last commit (HEAD), and says which; `worktree` and `head` force one. The snapshot's own
 * catalog/, rules/ and config/ are its configuration (PORTCULLIS_ROOT), with the demo bootstrap off and both
 * routes pointed at the mock through PORTCULLIS_ROUTE_SHARED_URL / _DEDICATED_URL. A principal and its
 * PAT are created through the admin API, as an operator would.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, type Pinning, type ServerProcess } from './processes.js';
import { SEMI_SPACE_FLAG } from '../../src/heap.js';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
// data/ (the knowledge evidence), docs/ and README.md (the site's generated entry points) are read at start.
const SNAPSHOT_PATHS = ['src', 'policies', 'catalog', 'rules', 'config', 'data', 'docs', 'README.md', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
// The compiled guardrail scanner (src/guard/compiled.ts loads it; built and committed, not built here).
SNAPSHOT_PATHS.push('scanner/build');
export const ADMIN_TOKEN = 'pcl_admin_bench_operator_token_0123456789';
/** 1,000,000 USD in micro-USD: more than any bench run can spend. */
const BENCH_CREDITS = 1_000_000_000_000;

export type SourceChoice = 'auto' | 'worktree' | 'head';

export interface Snapshot {
  dir: string;
  /** `working tree (<sha>, with uncommitted changes)` or `HEAD <sha>`. */
  source: string;
  /** Why the working tree was not used, when it was not. */
  note: string | null;
  remove(): void;
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: REPO, encoding: 'utf8' }).trim();
}

// The compiler is TypeScript 7 (`@typescript/native`); the `typescript` package is the 6.0 API that typescript-eslint reads.
function tsc(dir: string): Promise<{ ok: boolean; output: string }> {
  const child = spawn(process.execPath, [join(REPO, 'node_modules/@typescript/native/bin/tsc'), '-p', join(dir, 'tsconfig.build.json')], { cwd: dir });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve) =>
    child.once('close', (code) => {
      // tsc compiles TypeScript only: the Lua scripts the modules load go beside them, as `npm run build` does.
      if (code === 0) execFileSync(process.execPath, [join(REPO, 'scripts/copy-lua.mjs'), dir]);
      resolve({ ok: code === 0, output });
    }),
  );
}

function snapshotDir(from: 'worktree' | 'head'): string {
  const dir = mkdtempSync(join(tmpdir(), `portcullis-bench-${from}-`));
  if (from === 'worktree') {
    for (const p of SNAPSHOT_PATHS) if (existsSync(join(REPO, p))) cpSync(join(REPO, p), join(dir, p), { recursive: true });
  } else {
    const tar = execFileSync('git', ['archive', '--format=tar', 'HEAD', ...SNAPSHOT_PATHS], { cwd: REPO, maxBuffer: 256 * 1024 * 1024 });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
  }
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Copies and builds the gateway (`tsc -p tsconfig.build.json` into the snapshot's dist/). */
export async function buildSnapshot(choice: SourceChoice, log: (line: string) => void): Promise<Snapshot> {
  const sha = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'src', 'policies', 'catalog', 'rules', 'config', 'data']) !== '';
  let note: string | null = null;
  if (choice !== 'head') {
    const dir = snapshotDir('worktree');
    const built = await tsc(dir);
    if (built.ok) {
      return {
        dir,
        source: `working tree (${sha}${dirty ? ', with uncommitted changes' : ''})`,
        note: null,
        remove: () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    rmSync(dir, { recursive: true, force: true });
    const errors = built.output.split('\n').filter((l) => /error TS\d+/.test(l));
    if (choice === 'worktree') throw new Error(`the working tree does not build:\n${errors.slice(0, 20).join('\n')}`);
    note = `the working tree did not type-check (${errors.length} errors, e.g. ${errors[0] ?? '?'}); benchmarked HEAD instead`;
    log(`  ${note}`);
  }
  const dir = snapshotDir('head');
  const built = await tsc(dir);
  if (!built.ok) throw new Error(`HEAD does not build:\n${built.output.slice(0, 4000)}`);
  return { dir, source: `HEAD ${sha}`, note, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Portcullis {
  server: ServerProcess;
  /** What the bench principal was given to pay with beyond the free allowance, for the report. */
  credits: string;
  apiUrl: string;
  adminUrl: string;
  /** A PAT of a fresh blue-team principal. */
  token: string;
  adminGet(path: string): Promise<unknown>;
  /** A PAT of another fresh principal (no credits: its calls take the free path). */
  newToken(): Promise<string>;
}

async function admin(adminUrl: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${adminUrl}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

export interface PortcullisOptions {
  snapshot: Snapshot;
  mockBaseUrl: string;
  redisUrl: string;
  pin: Pinning;
  /** Extra node flags, e.g. --cpu-prof. */
  nodeFlags?: string[];
  /** The `node` binary to run it on (bench/harness/node-runtime.ts; default: the Node running the bench). */
  node?: string;
  name?: string;
  /** PORTCULLIS_WORKERS (default 1); with pinning on, N > 1 runs on every core (taskset -c 0-N-1). */
  workers?: number | 'auto';
  /** With pinning on, the cores to run on (taskset -c), instead of the default above. */
  cores?: string;
  /** More environment for the gateway (an allocator or malloc setting to compare, e.g. LD_PRELOAD). */
  env?: Record<string, string>;
}

/** `K=V K2=V2` (the --after-env option of bench/memory.ts and bench/cpu-per-call.ts) as an environment. */
export function parseEnv(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(/\s+/)
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

export async function startPortcullis(opts: PortcullisOptions): Promise<Portcullis> {
  const root = opts.snapshot.dir;
  const gatewayYaml = join(root, 'config/gateway.yaml');
  // One principal drives the whole load: its per-minute rate limit is raised, not removed, so the limit's
  // script stays on the measured path (src/ratelimit).
  writeFileSync(
    gatewayYaml,
    readFileSync(gatewayYaml, 'utf8')
      .replace('bootstrap: true', 'bootstrap: false')
      .replace(/perPrincipal: \d+/, 'perPrincipal: 1000000000'),
  );
  const server = await startServer({
    name: opts.name ?? 'R3 portcullis',
    ...(opts.node ? { command: opts.node } : {}),
    args: [...(opts.nodeFlags ?? []), join(root, 'dist/main.js')],
    cwd: root,
    env: {
      PORTCULLIS_ROOT: root,
      PORT: '0',
      PORTCULLIS_ADMIN_PORT: '0',
      // The hosts the benchmark does not measure still bind: on free ports, so runs never collide.
      PORTCULLIS_AUTH_PORT: '0',
      PORTCULLIS_CONSOLE_PORT: '0',
      PORTCULLIS_SITE_PORT: '0',
      PORTCULLIS_GRAPH_PORT: '0',
      PORTCULLIS_ADMIN_TOKEN: ADMIN_TOKEN,
      PORTCULLIS_WATCH: '0',
      // Two malloc arenas, as `npm start`, the image and the systemd unit start it (docs/operators.md "Memory").
      MALLOC_ARENA_MAX: process.env['MALLOC_ARENA_MAX'] ?? '2',
      // V8's young generation at the size those start it with (src/heap.ts), before any NODE_OPTIONS of the
      // bench's own (a later value wins); an --after-env NODE_OPTIONS replaces it.
      NODE_OPTIONS: `${SEMI_SPACE_FLAG} ${process.env['NODE_OPTIONS'] ?? ''}`.trim(),
      PORTCULLIS_ROUTE_SHARED_URL: opts.mockBaseUrl,
      PORTCULLIS_ROUTE_DEDICATED_URL: opts.mockBaseUrl,
      REDIS_URL: opts.redisUrl,
      LOG_LEVEL: 'info',
      NODE_ENV: 'production',
      PORTCULLIS_WORKERS: String(opts.workers ?? 1),
      ...opts.env,
    },
    pin: opts.pin,
    ...(opts.cores ? { cores: opts.cores } : typeof opts.workers === 'number' && opts.workers > 1 ? { cores: `0-${opts.workers - 1}` } : {}),
    ready: /admin API on (\S+)\n/,
  });
  try {
    return await setUp(server);
  } catch (err) {
    // A gateway that started but could not be set up is not left running.
    await server.stop();
    throw err;
  }
}

async function setUp(server: ServerProcess): Promise<Portcullis> {
  const [, apiUrl, adminUrl] = /serving the API on (\S+) and the admin API on (\S+)/.exec(server.output())!;
  const tenant = `bench-${process.pid}-${Date.now().toString(36)}`;
  let others = 0;
  const p = await admin(adminUrl!, 'POST', '/principals', { tenant });
  if (p.status !== 201) throw new Error(`creating the bench principal failed: ${JSON.stringify(p.body)}`);
  const t = await admin(adminUrl!, 'POST', `/principals/${encodeURIComponent(p.body.id)}/tokens`, { label: 'bench' });
  if (t.status !== 201) throw new Error(`issuing the bench PAT failed: ${JSON.stringify(t.body)}`);
  // The free allowance (1,000 requests a day) is spent in the first second; past it a call is paid from
  // credits, so the principal gets plenty, through the operator's credit grant where the gateway has one.
  const c = await admin(adminUrl!, 'POST', `/principals/${encodeURIComponent(p.body.id)}/credits`, {
    microUSD: BENCH_CREDITS,
    operationId: `bench-credits-${tenant}`,
  });
  const credits =
    c.status === 201 || c.status === 200
      ? `${BENCH_CREDITS / 1e6} USD of credits (operator grant): calls past the free allowance are paid, so R3 measures the paid path`
      : c.status === 404
        ? 'no credits (this gateway has no credit grant): every call takes the free path'
        : `credit grant failed (${c.status} ${JSON.stringify(c.body).slice(0, 200)})`;
  if (c.status !== 201 && c.status !== 200 && c.status !== 404) throw new Error(`granting the bench credits failed: ${credits}`);
  return {
    server,
    credits,
    apiUrl: apiUrl!,
    adminUrl: adminUrl!,
    token: t.body.token as string,
    adminGet: async (path) => (await admin(adminUrl!, 'GET', path)).body,
    newToken: async () => {
      const q = await admin(adminUrl!, 'POST', '/principals', { tenant: `${tenant}-${++others}` });
      const u = await admin(adminUrl!, 'POST', `/principals/${encodeURIComponent(q.body.id)}/tokens`, { label: 'bench' });
      if (q.status !== 201 || u.status !== 201) throw new Error(`issuing another bench PAT failed: ${JSON.stringify(u.body)}`);
      return u.body.token as string;
    },
  };
}
