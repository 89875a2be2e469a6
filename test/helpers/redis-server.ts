/**
 * A real, private `redis-server` for tests: its own loopback port, its own fresh temp dir, and the durability
 * settings we recommend to operators (append-only file fsynced on every write, no RDB snapshots, no
 * eviction), so a test that SIGKILLs it and restarts it checks what production would keep. Tests never use a
 * Redis somebody else started: its data, config and lifetime would not be ours to reason about.
 *
 * Every server started here is SIGKILLed when the test process exits (a suite that forgets one is named by
 * test/helpers/hooks.ts) and its dir removed, so no orphan redis-server outlives a run — except if the test
 * process itself is SIGKILLed, which no in-process hook can see.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops the server for good (SIGTERM, then SIGKILL if it lingers) and removes its dir. Idempotent. */
  stop(): Promise<void>;
  /**
   * Sends a signal. For signals that end the process (SIGKILL, SIGTERM, ...) resolves once it has exited;
   * SIGSTOP/SIGCONT resolve at once (the process lives on, frozen or thawed). The dir is kept for restart().
   */
  kill(signal: NodeJS.Signals): Promise<void>;
  /** Starts the server again on the same port and dir (stopping it first if it runs); resolves on PING. */
  restart(): Promise<void>;
}

export const INSTALL_COMMAND = 'apt-get update && apt-get install -y redis-server';

const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
const LOG_LINES_KEPT = 40;

/** Every live child and every dir we made, so the exit hook can clean up whatever a test forgot. */
const liveChildren = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  const cleanup = (): void => {
    for (const child of liveChildren) child.kill('SIGKILL');
    liveChildren.clear();
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
    liveDirs.clear();
  };
  process.on('exit', cleanup);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      cleanup();
      process.removeListener(signal, onSignal);
      // A listener suppresses the default "terminate"; re-raise so the process still dies if nobody else
      // (mocha) handles the signal.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

function redisServerBinary(): string {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this PATH entry
    }
  }
  throw new Error(
    `redis-server is not on PATH; the store tests need a real one. Install it with:\n  ${INSTALL_COMMAND}\n` + '(scripts/setup.sh does this before the tests.)',
  );
}

/** Resolves when the server answers PING with +PONG (not -LOADING while it replays the AOF). */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    let buffer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      if (buffer.includes('\r\n')) done(buffer.startsWith('+PONG'));
    });
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

class PortInUse extends Error {}

class ManagedRedisServer implements RedisServer {
  readonly url: string;
  #child: ChildProcess | null = null;
  #log: string[] = [];
  #stopped = false;

  constructor(
    readonly port: number,
    readonly dir: string,
    private readonly binary: string,
    private readonly extraArgs: string[] = [],
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--logfile',
      '',
      ...this.extraArgs,
    ];
    const child = spawn(this.binary, args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    liveChildren.add(child);
    this.#log = [];
    // Drain both pipes (a full pipe would block the server) and keep the tail for error messages.
    const keep = (chunk: Buffer): void => {
      this.#log.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      if (this.#log.length > LOG_LINES_KEPT) this.#log.splice(0, this.#log.length - LOG_LINES_KEPT);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    let exitedEarly = false;
    child.once('exit', () => {
      exitedEarly = true;
      liveChildren.delete(child);
    });

    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (exitedEarly) {
        const log = this.#log.join('\n');
        if (/address already in use/i.test(log)) throw new PortInUse(log);
        throw new Error(`redis-server on port ${this.port} exited during start:\n${log}`);
      }
      if (await pingOnce(this.port)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    await exited(child);
    const log = this.#log.join('\n');
    throw new Error(`redis-server on port ${this.port} did not answer PING in ${READY_TIMEOUT_MS} ms:\n${log}`);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    if (signal === 'SIGSTOP' || signal === 'SIGCONT' || signal === 'SIGTSTP') return;
    await exited(child);
  }

  async #terminate(): Promise<void> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGCONT'); // a SIGSTOPped server would never act on SIGTERM
    const gone = exited(child);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await gone;
    clearTimeout(timer);
  }

  async restart(): Promise<void> {
    if (this.#stopped) throw new Error('restart() after stop(): the server and its dir are gone');
    await this.#terminate();
    await this.start();
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#terminate();
    this.#child = null;
    rmSync(this.dir, { recursive: true, force: true });
    liveDirs.delete(this.dir);
  }
}

export interface RedisServerOptions {
  /**
   * Start it as a Redis Cluster node (`cluster-enabled yes`) with its cluster bus on a second free port and
   * this node timeout (how long a silent master stays up in its peers' eyes before a failover starts).
   * It holds no slots until test/helpers/redis-cluster.ts joins it into a cluster.
   */
  clusterNodeTimeoutMs?: number;
  /** Start it as a replica of the server on this port (`replicaof 127.0.0.1 <port>`). */
  replicaOf?: number;
  /** More command-line settings, e.g. `['--rename-command', 'CLIENT', '']` for a server without CLIENT. */
  args?: string[];
}

/** Starts a private redis-server and resolves once it answers PING. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = redisServerBinary();
  installExitHook();
  for (let attempt = 0; ; attempt += 1) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'portcullis-redis-'));
    liveDirs.add(dir);
    const cluster =
      options.clusterNodeTimeoutMs === undefined
        ? []
        : [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-port',
            String(await freePort()),
            '--cluster-node-timeout',
            String(options.clusterNodeTimeoutMs),
          ];
    const replica = options.replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(options.replicaOf)];
    const server = new ManagedRedisServer(await freePort(), dir, binary, [...cluster, ...replica, ...(options.args ?? [])]);
    try {
      await server.start();
      return server;
    } catch (err) {
      await server.stop();
      // Someone took the port between freePort() and the bind: take another.
      if (err instanceof PortInUse && attempt < 5) continue;
      throw err;
    }
  }
}
