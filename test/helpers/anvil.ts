/**
 * A real local EVM node for the smart-account tests: Foundry's anvil, from the npm registry. The binary
 * ships inside a per-platform package; the project pins the Linux x64 one (`@foundry-rs/anvil-linux-amd64`,
 * the machines it develops and tests on: the registry reachable here serves no other platform's, so a
 * lockfile naming them could not `npm ci`). No install script or download runs. Anvil listens on a port
 * the kernel picks and mines each transaction at once. Never a public network.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

export interface Anvil {
  url: string;
  chainId: number;
  stop(): Promise<void>;
}

function anvilBinary(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  let dir: string;
  try {
    dir = dirname(require.resolve(`${pkg}/package.json`));
  } catch {
    throw new Error(`anvil for this platform is not installed: npm install --no-save ${pkg}@1.7.1 (the project pins the linux-amd64 one)`);
  }
  return join(dir, 'bin', process.platform === 'win32' ? 'anvil.exe' : 'anvil');
}

export async function startAnvil(chainId: number): Promise<Anvil> {
  const child: ChildProcess = spawn(anvilBinary(), ['--chain-id', String(chainId), '--port', '0', '--host', '127.0.0.1'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const started = Date.now();
  let m: RegExpExecArray | null;
  while (!(m = /Listening on (127\.0\.0\.1:\d+)/.exec(out))) {
    if (child.exitCode !== null) throw new Error(`anvil exited with ${child.exitCode}: ${out.slice(-500)}`);
    if (Date.now() - started > 30_000) {
      child.kill('SIGKILL');
      throw new Error('anvil did not start');
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url: `http://${m[1]}`,
    chainId,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
