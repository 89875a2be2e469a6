/**
 * The documentation's commands work when pasted. Every shell block of README.md and docs/*.md whose fence
 * reads ```sh run is run, in order, by bash in one fresh folder, against a gateway started the way `npm start`
 * starts it (its own redis-server, the demo upstream), with the environment its `export` line sets. Then the
 * gateway is stopped and started again on the same data folder and every block runs a second time: what the
 * first pass made (the software passkey's account, the grant) is still there, and the walk-through holds.
 *
 * The blocks name the default ports (localhost:8080 ...); the gateway runs on a free PORTCULLIS_PORT_BASE and
 * the blocks are read with the default ports moved the same way. A `# -> ` comment under a command is what
 * it prints: each error code (`route-not-configured`), each `"key":value` pair and each leading `word:` it
 * names must be in what the commands before it printed.
 */
import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { configRoot, REPO } from './helpers/gateway.js';
import { untilOutput } from './helpers/wait.js';

/** Default port of each listener, and its distance from the API's (PORTCULLIS_PORT_BASE keeps it). */
const DEFAULT_PORTS = [8080, 8081, 8082, 8083, 8084, 8090];

interface Block {
  file: string;
  line: number;
  text: string;
}

export function runnableBlocks(): Block[] {
  const files = [
    'README.md',
    ...readdirSync(join(REPO, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const blocks: Block[] = [];
  for (const file of files) {
    const text = readFileSync(join(REPO, file), 'utf8');
    for (const m of text.matchAll(/^```sh run\n([\s\S]*?)^```$/gm)) {
      blocks.push({ file, line: text.slice(0, m.index).split('\n').length, text: m[1]! });
    }
  }
  return blocks;
}

/** What a `# -> ` comment says will be printed, as strings to find in the output. */
function expectations(comment: string): string[] {
  const codes = comment.match(/\b[a-z0-9]+(?:-[a-z0-9]+)+\b/g) ?? [];
  const pairs = comment.match(/"[A-Za-z]+":(?:"[^"…]*"|\d+)/g) ?? [];
  const lead = /^([a-z]+):/.exec(comment.trim());
  return [...codes.filter((c) => !/^\d/.test(c)), ...pairs, ...(lead ? [`${lead[1]}:`] : [])];
}

async function freeBase(): Promise<number> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 40_000);
    const all = await Promise.all(DEFAULT_PORTS.map((p) => free(base + p - 8080)));
    if (all.every(Boolean)) return base;
  }
}

interface Started {
  child: ChildProcess;
  exports: Record<string, string>;
}

async function start(root: string, base: number): Promise<Started> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORTCULLIS_ROOT: root,
    PORTCULLIS_PORT_BASE: String(base),
    PORTCULLIS_WATCH: '0',
    LOG_LEVEL: 'warn',
    PORTCULLIS_ADMIN_TOKEN: '',
  };
  for (const k of ['PORT', 'REDIS_URL', 'REDIS_CLUSTER_NODES', 'PORTCULLIS_STORE', 'PORTCULLIS_DATA_DIR']) delete env[k];
  for (const k of Object.keys(env)) if (/^PORTCULLIS_[A-Z]+_(PORT|URL)$/.test(k)) delete env[k];
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await untilOutput(child, () => out, /^ {2}export [^\n]*\n/m, "the gateway's export line");
  const line = /^ {2}export ([^\n]*)$/m.exec(out)![1]!;
  return { child, exports: Object.fromEntries(line.split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) };
}

async function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null) return;
  s.child.kill('SIGTERM');
  await once(s.child, 'exit');
}

/**
 * One block as a bash script: fail on the first failing command, `npx portcullis` as the clone's command
 * from source (what `npx portcullis` runs in the clone once built), and a marker before each `# -> `.
 */
function script(block: Block, base: number): { text: string; expected: string[][] } {
  const expected: string[][] = [];
  const body = block.text
    .replace(/(localhost|127\.0\.0\.1):(80[0-9]{2})\b/g, (m, host: string, port: string) =>
      DEFAULT_PORTS.includes(Number(port)) ? `${host}:${base + Number(port) - 8080}` : m,
    )
    .split('\n')
    .map((line) => {
      const m = /^\s*# -> (.*)$/.exec(line);
      if (!m) return line;
      expected.push(expectations(m[1]!));
      return `echo "@@expect ${expected.length - 1}"`;
    })
    .join('\n');
  const preamble = [
    'set -euo pipefail',
    `npx() { if [ "$1" = portcullis ]; then shift; ${JSON.stringify(process.execPath)} --import ${pathToFileURL(join(REPO, 'node_modules/tsx/dist/loader.mjs')).href} ${JSON.stringify(join(REPO, 'src/cli/main.ts'))} "$@"; else command npx "$@"; fi; }`,
  ].join('\n');
  return { text: `${preamble}\n${body}\n`, expected };
}

async function runBlock(block: Block, base: number, cwd: string, env: Record<string, string>): Promise<void> {
  const { text, expected } = script(block, base);
  let stdout = '';
  let stderr = '';
  try {
    ({ stdout, stderr } = await promisify(execFile)('bash', ['-c', text], { cwd, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024 }));
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    expect.fail(`${block.file}:${block.line}: the block exited ${e.code}\nstdout (end):\n${e.stdout.slice(-3000)}\nstderr:\n${e.stderr.slice(-3000)}`);
  }
  const segments = stdout.split(/@@expect \d+\n/);
  expected.forEach((want, i) => {
    for (const w of want) expect(segments[i]?.slice(-3000), `${block.file}:${block.line}: expectation ${i} (${w})\n${stderr.slice(-3000)}`).to.contain(w);
  });
}

describe("the documentation's shell blocks, run as pasted, twice across a restart", function () {
  this.timeout(300_000);

  it('finds the runnable blocks of the README and the sign-in walk-through', () => {
    const files = new Set(runnableBlocks().map((b) => b.file));
    expect([...files]).to.include.members(['README.md', 'docs/sign-in.md']);
  });

  it('runs every block, then again after a stop and a start', async () => {
    const root = configRoot();
    const cwd = mkdtempSync(join(tmpdir(), 'pcl-docs-'));
    const base = await freeBase();
    const blocks = runnableBlocks();
    let gw = await start(root, base);
    try {
      for (const block of blocks) await runBlock(block, base, cwd, { ...gw.exports, PORTCULLIS_ROOT: root });
    } finally {
      await stop(gw);
    }
    gw = await start(root, base);
    try {
      // The demo principal was granted its rung in the first pass, and keeps it: the walk-through's "refused
      // before verification" is shown again with a principal made now, as an operator would for a newcomer.
      const admin = async (path: string, body: unknown) =>
        (await (
          await fetch(`${gw.exports['PORTCULLIS_ADMIN_URL']}/admin${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${gw.exports['PORTCULLIS_ADMIN_TOKEN']}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()) as Record<string, string>;
      const principal = (await admin('/principals', { tenant: 'second-pass' }))['id']!;
      const pat = (await admin(`/principals/${encodeURIComponent(principal)}/tokens`, { label: 'second pass' }))['token']!;
      for (const block of blocks) await runBlock(block, base, cwd, { ...gw.exports, PAT: pat, PRINCIPAL: principal, PORTCULLIS_ROOT: root });
    } finally {
      await stop(gw);
    }
  });
});
