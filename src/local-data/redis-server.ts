/**
 * The `redis-server` that `npm start` runs for itself when no store is configured, so that accounts,
 * passkeys, tokens, balances and receipts outlive a restart on a developer's machine. It is the same
 * Redis store production uses (src/store/redis.ts); only its lifetime is ours: started before the gateway,
 * stopped (SIGTERM, which makes Redis write its append-only file and exit) after the gateway's store closed.
 *
 * Where it lives: one folder (the data folder), holding `redis.conf` (rewritten at every start, mode 0600:
 * it carries the password), `appendonlydir/` (the data), `redis.pid` and `redis.log`. It listens on a free
 * loopback port with a password generated at each start, so no other local program reaches it by accident.
 *
 * It runs in its own process group: a Ctrl-C in the terminal reaches the gateway, which drains its calls
 * and then stops Redis, rather than Redis going away under calls still in flight. A gateway killed outright
 * (SIGKILL) leaves Redis running; the next start finds it by its pid file and stops it before starting anew.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface ManagedRedis {
  /** redis://:<password>@127.0.0.1:<port> */
  readonly url: string;
  /** Stops the server (SIGTERM: Redis flushes its append-only file) and resolves once it has exited. */
  stop(): Promise<void>;
}

/** True when a `redis-server` binary can be run from PATH. */
export function redisServerAvailable(): boolean {
  const probe = spawnSync('redis-server', ['--version'], { stdio: 'ignore' });
  return !probe.error && probe.status === 0;
}

const READY_MS = 15_000;
const ORPHAN_STOP_MS = 15_000;

export class ManagedRedisError extends Error {}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** A redis-server left behind by a gateway that was killed outright: stop it so its files are ours again. */
async function stopOrphan(dir: string): Promise<void> {
  const pidFile = join(dir, 'redis.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  // Only a redis-server: a pid file outliving a reboot may name some other process by now.
  const cmd = existsSync(`/proc/${pid}/cmdline`) ? readFileSync(`/proc/${pid}/cmdline`, 'utf8') : 'redis-server';
  if (!cmd.includes('redis-server')) return;
  process.kill(pid, 'SIGTERM');
  if (!(await waitFor(() => !alive(pid), ORPHAN_STOP_MS))) {
    throw new ManagedRedisError(`the redis-server left running in ${dir} (pid ${pid}) did not stop; stop it and start again`);
  }
}

async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

/** One AUTH + PING over a raw connection: true once the server answers PONG (it has loaded its data). */
function pong(port: number, password: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let seen = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(`AUTH ${password}\r\nPING\r\n`));
    socket.on('data', (chunk) => {
      seen += chunk.toString();
      if (seen.includes('+PONG')) done(true);
      else if (seen.includes('-')) done(false); // -LOADING while the append-only file is read, or an error
    });
  });
}

/**
 * Durability as docs/operators.md recommends for money: every write is in the append-only file before it is
 * acknowledged (appendfsync always), no RDB snapshots beside it, and nothing ever evicted.
 */
function config(dir: string, port: number, password: string): string {
  return [
    '# Written by portcullis at each start (src/local-data/redis-server.ts); edits are overwritten.',
    `port ${port}`,
    'bind 127.0.0.1',
    'protected-mode yes',
    `requirepass ${password}`,
    `dir "${dir}"`,
    'appendonly yes',
    'appendfsync always',
    'save ""',
    'maxmemory-policy noeviction',
    'daemonize no',
    `pidfile "${join(dir, 'redis.pid')}"`,
    `logfile "${join(dir, 'redis.log')}"`,
    '',
  ].join('\n');
}

export async function startManagedRedis(dir: string): Promise<ManagedRedis> {
  await stopOrphan(dir);
  const port = await freeLoopbackPort();
  const password = randomBytes(24).toString('hex');
  const confPath = join(dir, 'redis.conf');
  writeFileSync(confPath, config(dir, port, password), { mode: 0o600 });
  const child: ChildProcess = spawn('redis-server', [confPath], { cwd: dir, detached: true, stdio: 'ignore', env: { PATH: process.env['PATH'] ?? '' } });
  const exited = once(child, 'exit');
  // Whatever way this process ends, Redis is asked to stop (and flushes its file) rather than left behind.
  const onExit = () => child.exitCode === null && child.signalCode === null && child.kill('SIGTERM');
  process.on('exit', onExit);
  const ready = await waitFor(async () => child.exitCode !== null || (await pong(port, password)), READY_MS);
  if (!ready || child.exitCode !== null) {
    child.kill('SIGKILL');
    const log = existsSync(join(dir, 'redis.log')) ? readFileSync(join(dir, 'redis.log'), 'utf8').trim().split('\n').slice(-1)[0] : '';
    throw new ManagedRedisError(`redis-server did not start in ${dir}${log ? `: ${log}` : ''}`);
  }
  return {
    url: `redis://:${password}@127.0.0.1:${port}`,
    async stop() {
      process.off('exit', onExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await exited;
    },
  };
}
