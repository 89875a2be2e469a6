/**
 * `npm start` keeps its state: a gateway started on the defaults runs its own redis-server with its data
 * in the data folder, so what a newcomer made before a restart (an account made by the CLI's software
 * passkey, a PAT it issued, a receipt, the receipt key, the operator token) is all there after it. Without
 * redis-server on PATH it falls back to memory and says so in one line.
 */
import { expect } from 'chai';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { configRoot } from './helpers/gateway.js';
import { spawnGateway, type GatewayProcess } from './helpers/process.js';
import { cli } from './helpers/cli.js';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { FREE_PORTS, REPO } from './helpers/gateway.js';
import { untilOutput } from './helpers/wait.js';

const grab = (gw: GatewayProcess, re: RegExp) => re.exec(gw.stdout())?.[1];
const authUrl = (gw: GatewayProcess) => grab(gw, /^ {2}auth: +(\S+)/m)!.replace('127.0.0.1', 'localhost');
const consoleOrigin = (gw: GatewayProcess) => grab(gw, /^ {2}console: +(\S+)/m)!.replace('127.0.0.1', 'localhost');

async function started(root: string): Promise<GatewayProcess> {
  const gw = await spawnGateway(root, { PORTCULLIS_ADMIN_TOKEN: '', REDIS_URL: '' });
  await gw.output(/export /);
  return gw;
}

describe('npm start keeps its state across a restart', function () {
  this.timeout(120_000);

  it('the CLI passkey, its PAT, the receipts, the receipt key and the operator token survive a stop and a start', async () => {
    const root = configRoot();
    const key = join(mkdtempSync(join(tmpdir(), 'pcl-key-')), 'me.passkey.json');
    let gw = await started(root);
    let pat: string, receiptId: string, principal: string, keyPem: string, operator: string;
    try {
      expect(gw.stdout()).to.match(/store: redis-server run by portcullis, data in \S+\.portcullis\/data \(kept across restarts\)/);
      const signIn = await cli(['passkey', 'sign-in', '--key', key, '--username', 'ada', '--auth-url', authUrl(gw)]);
      expect(signIn.code, signIn.stderr).to.equal(0);
      principal = /created account (\S+)/.exec(signIn.stderr)![1]!;
      const issued = await fetch(`${gw.apiUrl}/v1/account/api-token`, {
        method: 'POST',
        headers: { cookie: signIn.stdout.trim(), origin: consoleOrigin(gw), 'content-type': 'application/json' },
        body: JSON.stringify({ label: 'before restart' }),
      });
      expect(issued.status).to.equal(201);
      pat = ((await issued.json()) as { token: string }).token;
      const chat = await fetch(`${gw.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${pat}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(chat.status).to.equal(200);
      receiptId = ((await chat.json()) as { receiptId: string }).receiptId;
      keyPem = ((await (await fetch(`${gw.apiUrl}/v1/secure`)).json()) as any).receiptLog.publicKeyPem;
      operator = grab(gw, /operator token \(generated[^)]*\): (\S+)/)!;
    } finally {
      await gw.stop();
    }
    const data = join(root, '.portcullis', 'data');
    expect(existsSync(join(data, 'appendonlydir'))).to.equal(true);
    expect(statSync(join(data, 'receipt-key.pem')).mode & 0o077).to.equal(0);

    gw = await started(root);
    try {
      const status = await fetch(`${gw.apiUrl}/v1/research/status`, { headers: { authorization: `Bearer ${pat}` } });
      expect(status.status, 'the PAT issued before the restart').to.equal(200);
      const again = await cli(['passkey', 'sign-in', '--key', key, '--auth-url', authUrl(gw)]);
      expect(again.code, again.stderr).to.equal(0);
      expect(again.stderr).to.contain(`signed in as ${principal}`);
      const receipt = await fetch(`${gw.apiUrl}/v1/receipts/${receiptId}`, { headers: { authorization: `Bearer ${pat}` } });
      expect(receipt.status, 'the receipt made before the restart').to.equal(200);
      const secure = (await (await fetch(`${gw.apiUrl}/v1/secure`)).json()) as any;
      expect(secure.receiptLog.publicKeyPem, 'the receipt key').to.equal(keyPem);
      expect(secure.receiptLog.ephemeral ?? false).to.equal(false);
      expect(grab(gw, /operator token \(generated[^)]*\): (\S+)/), 'the operator token').to.equal(operator);
    } finally {
      await gw.stop();
    }
  });

  it('refuses a second gateway on the same data folder in one line', async () => {
    const root = configRoot();
    const first = await started(root);
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
        env: { ...process.env, PORTCULLIS_ROOT: root, ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'error', REDIS_URL: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const [code] = (await once(child, 'exit')) as [number];
      expect(code).to.equal(75);
      expect(err.trim()).to.match(
        /^portcullis: another portcullis \(pid \d+\) is using the data folder \S+; stop it, or give this one its own folder with PORTCULLIS_DATA_DIR$/,
      );
      expect((await fetch(`${first.apiUrl}/healthz`)).status, 'the first one still serves').to.equal(200);
    } finally {
      await first.stop();
    }
  });

  /** Starts `npm start`'s gateway with `env` on top, until its banner; its stdout and stderr by then. */
  async function bannerOf(env: Record<string, string>): Promise<{ out: string; err: string; stop(): Promise<void> }> {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
      env: { ...process.env, ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'error', REDIS_URL: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const stop = async () => {
      child.kill('SIGTERM');
      if (child.exitCode === null) await once(child, 'exit');
    };
    await untilOutput(child, () => `${out}${err}`, /export /, "the gateway's banner");
    return { out, err, stop };
  }

  it('falls back to memory with one line naming the install command when redis-server is not installed', async () => {
    const started = await bannerOf({ PATH: '/nonexistent', PORTCULLIS_ROOT: configRoot() });
    try {
      expect(started.err.trim().split('\n')).to.deep.equal([
        'portcullis: redis-server is not installed, so accounts, tokens and receipts are kept in memory and lost when this process stops; to keep them, install it (sudo apt-get install -y redis-server; on macOS: brew install redis) and start again',
      ]);
      expect(started.out).to.contain('store: memory (redis-server not installed: forgotten when this process stops)');
    } finally {
      await started.stop();
    }
  });

  it('starts on memory with one line when the data folder cannot be created (a read-only root)', async () => {
    const root = configRoot();
    // A file where the folder should be: mkdir fails as it does on a read-only root.
    writeFileSync(join(root, 'not-a-folder'), '');
    const unwritable = join(root, 'not-a-folder', 'data');
    const started = await bannerOf({ PORTCULLIS_ROOT: root, PORTCULLIS_DATA_DIR: unwritable });
    try {
      expect(started.err.trim().split('\n')).to.have.length(1);
      expect(started.err).to.include(`portcullis: cannot create the data folder ${unwritable} (ENOTDIR), so state is kept in memory`);
      expect(started.out).to.contain(`store: memory (the data folder ${unwritable} cannot be created`);
    } finally {
      await started.stop();
    }
  });
});
