/**
 * A pinned tool started as a server for a suite: the binary scripts/setup.sh built into its version-pinned
 * folder (the version read from scripts/tools.env), on free loopback ports, ready once it accepts a
 * connection on the first of them. stripe-mock and the witness both start this way.
 *
 * Ports are picked free and then handed to the tool, so another process may take one in between: the start
 * is tried again with fresh ports when the tool says "address already in use".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { REPO } from './gateway.js';

/** The path of a pinned tool, e.g. `pinnedTool('witness', 'WITNESS_VERSION')`; throws with the fix when it is not built. */
export function pinnedTool(name: string, versionKey: string): string {
  const version = new RegExp(`^${versionKey}=(\\S+)`, 'm').exec(readFileSync(join(REPO, 'scripts/tools.env'), 'utf8'))?.[1];
  const dir = process.env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools');
  const path = join(dir, `${name}-${version}`, name);
  if (!version || !existsSync(path)) throw new Error(`${path} is missing: run \`npm run setup\` (scripts/setup.sh builds ${name})`);
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

export interface ToolServer {
  /** The ports it was given; it accepts connections on the first. */
  ports: number[];
  /** The tail of what it wrote (stdout and stderr together). */
  output(): string;
  /** SIGSTOP freezes it (requests hang), SIGCONT thaws it. */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): void;
  /** SIGTERM (after a SIGCONT, in case it is frozen), resolved once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `binary` with `args(ports)` on `ports` fresh free ports (one unless said), keeping the last
 * `keepChars` of its output; it must accept a connection on `ports[0]` within 15 s.
 */
export async function startToolServer(
  what: string,
  binary: string,
  args: (ports: number[]) => string[],
  opts: { ports?: number; keepChars?: number } = {},
): Promise<ToolServer> {
  for (let attempt = 0; ; attempt++) {
    const ports: number[] = [];
    for (let i = 0; i < (opts.ports ?? 1); i++) ports.push(await freePort());
    const child: ChildProcess = spawn(binary, args(ports), { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const keep = (c: Buffer) => void (log = (log + c.toString()).slice(-(opts.keepChars ?? 4000)));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let exited = false;
    child.once('exit', () => void (exited = true));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline && !(await accepts(ports[0]!))) await new Promise((r) => setTimeout(r, 50));
    if (exited || Date.now() >= deadline) {
      child.kill('SIGKILL');
      if (attempt < 3 && /address already in use/.test(log)) continue;
      throw new Error(`${what} did not start:\n${log}`);
    }
    return {
      ports,
      output: () => log,
      signal: (sig) => void child.kill(sig),
      async stop() {
        if (exited) return;
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        await gone;
      },
    };
  }
}
