/**
 * Start-up as a newcomer meets it: the printed `export` line carries everything the CLI needs
 * (the admin URL too, and a working demo PAT); a port that is taken is one clear line on stderr, not a
 * stack trace; and `npm start` runs the gateway as the process it starts, so stopping it stops the gateway,
 * with malloc's arenas capped at two (docs/operators.md, Memory).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { configRoot, FREE_PORTS, REPO } from './helpers/gateway.js';
import { spawnGateway } from './helpers/process.js';
import { until, untilOutput } from './helpers/wait.js';

/** The `node dist/main.js` process among `pid`'s descendants (Linux /proc), and its environment. */
function gatewayEnvironment(pid: number): string[] {
  const parentOf = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // `pid (comm) state ppid ...`: comm may hold spaces, so read after its closing parenthesis.
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parentOf.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const descends = (p: number): boolean => {
    for (let q = parentOf.get(p); q !== undefined && q > 1; q = parentOf.get(q)) if (q === pid) return true;
    return false;
  };
  const gateway = [...parentOf.keys()].find((p) => descends(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes('dist/main.js'));
  expect(gateway, 'the gateway process under npm').to.be.a('number');
  return readFileSync(`/proc/${gateway}/environ`, 'utf8').split('\0');
}

describe('starting portcullis', function () {
  this.timeout(120_000);

  it('prints an export line with the demo PAT, the admin URL and the generated operator token, which the CLI can use', async () => {
    const gw = await spawnGateway(configRoot(), { PORTCULLIS_ADMIN_TOKEN: '' });
    try {
      await gw.output(/^ {2}export /m);
      const line = /^ {2}export (.+)$/m.exec(gw.stdout())![1]!;
      const vars = Object.fromEntries(line.split(' ').map((kv) => kv.split('=') as [string, string]));
      expect(vars['PAT']).to.match(/^pcl_pat_/);
      expect(vars['PORTCULLIS_ADMIN_URL']).to.equal(gw.adminUrl);
      expect(vars['PORTCULLIS_ADMIN_TOKEN']).to.match(/^pcl_admin_/);
      const cli = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'admin', 'principal', 'create', '--tenant', 'export-line'], {
        env: { ...process.env, ...vars, PORTCULLIS_ADMIN_PORT: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      cli.stdout.on('data', (c: Buffer) => (out += c.toString()));
      const [code] = (await once(cli, 'exit')) as [number];
      expect(code, out).to.equal(0);
      expect(out).to.contain('did:web:portcullis.localhost:tenant:export-line');
    } finally {
      await gw.stop();
    }
  });

  it('says in one line which listener cannot bind when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
        env: { ...process.env, PORTCULLIS_ROOT: configRoot(), ...FREE_PORTS, PORTCULLIS_ADMIN_PORT: String(port), PORTCULLIS_WATCH: '0', LOG_LEVEL: 'error' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      expect(code).to.equal(69);
      expect(err.trim().split('\n')).to.deep.equal([
        `portcullis: the admin listener cannot bind 127.0.0.1:${port}: the port is taken (another portcullis, or another program, is listening there); choose another port with PORTCULLIS_ADMIN_PORT or listeners.admin.port in config/gateway.yaml`,
      ]);
    } finally {
      taken.close();
    }
  });

  it("npm start runs the gateway as its own process, with two malloc arenas and the young generation's size: SIGTERM to npm stops the gateway", async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORTCULLIS_ROOT: configRoot(), ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'error' };
    delete env['MALLOC_ARENA_MAX'];
    const npm = spawn('npm', ['start', '--silent'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await untilOutput(npm, () => out, /admin API on \S+\n/, 'npm start');
    const api = /serving the API on (\S+)/.exec(out)![1]!;
    expect((await fetch(`${api}/healthz`)).status).to.equal(200);
    expect(gatewayEnvironment(npm.pid!)).to.include('MALLOC_ARENA_MAX=2');
    // V8's young generation at the gateway's size (src/heap.ts), ahead of any NODE_OPTIONS of the operator's.
    expect(gatewayEnvironment(npm.pid!).find((e) => e.startsWith('NODE_OPTIONS='))).to.match(/^NODE_OPTIONS=--max-semi-space-size=32\b/);
    npm.kill('SIGTERM');
    await once(npm, 'exit');
    // The gateway's port closes once it has stopped: until then a fetch still answers.
    await until(
      async () => {
        try {
          await fetch(`${api}/healthz`);
          return false;
        } catch {
          return true;
        }
      },
      { what: 'the gateway to stop answering after npm start was stopped' },
    );
  });
});
