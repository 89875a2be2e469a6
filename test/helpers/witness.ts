/**
 * A real witness for a suite: the omniwitness of the Go module github.com/transparency-dev/witness (a C2SP
 * tlog-witness), which scripts/setup.sh builds into its pinned tools folder. It gets a fresh Ed25519 key,
 * knows one log (`origin` with its verifier key, passed with --additional_logs) and keeps its state in
 * memory, on a free loopback port. Nothing of it is imitated: the gateway POSTs to its /add-checkpoint.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { REPO } from './gateway.js';
import { witnessVerifierKey } from '../../src/receipts/witness/cosignature.js';

function binary(): string {
  const version = /^WITNESS_VERSION=(\S+)/m.exec(readFileSync(join(REPO, 'scripts/tools.env'), 'utf8'))?.[1];
  const dir = process.env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools');
  const path = join(dir, `witness-${version}`, 'witness');
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`npm run setup\` (scripts/setup.sh builds the witness)`);
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

export interface Witness {
  name: string;
  /** Its cosignature verifier key, for receipts.witnesses and `receipt verify --witness`. */
  vkey: string;
  url: string;
  /** What it logged (klog, stderr), e.g. its "INCONSISTENT CHECKPOINTS" alarm. */
  output(): string;
  /** SIGSTOP freezes it (requests hang), SIGCONT thaws it: a witness that is down for a while. */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): void;
  stop(): Promise<void>;
}

/** Starts a witness that knows the log `origin` with verifier key `logKey`. */
export async function startWitness(opts: { name: string; origin: string; logKey: string }): Promise<Witness> {
  const dir = mkdtempSync(join(tmpdir(), 'witness-'));
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from((privateKey.export({ format: 'jwk' }) as { d: string }).d, 'base64url');
  // The note signer key format (golang.org/x/mod/sumdb/note): the witness derives its cosignature/v1 key from it.
  writeFileSync(join(dir, 'key'), `PRIVATE+KEY+${opts.name}+00000000+${Buffer.concat([Buffer.of(1), seed]).toString('base64')}`);
  writeFileSync(join(dir, 'logs.yaml'), `Logs:\n  - Origin: ${opts.origin}\n    PublicKey: ${opts.logKey}\n    URL: https://${opts.origin}\n`);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const args = [
      '--listen',
      `127.0.0.1:${port}`,
      '--metrics_listen',
      '',
      '--private_key_path',
      join(dir, 'key'),
      '--additional_logs',
      join(dir, 'logs.yaml'),
      '--logtostderr',
    ];
    const child: ChildProcess = spawn(binary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    const keep = (c: Buffer) => void (log = (log + c.toString()).slice(-20000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let exited = false;
    child.once('exit', () => void (exited = true));
    const deadline = Date.now() + 15_000;
    while (!exited && Date.now() < deadline && !(await accepts(port))) await new Promise((r) => setTimeout(r, 50));
    if (exited || Date.now() >= deadline) {
      child.kill('SIGKILL');
      if (attempt < 3 && /address already in use/.test(log)) continue;
      throw new Error(`the witness did not start:\n${log}`);
    }
    return {
      name: opts.name,
      vkey: witnessVerifierKey(opts.name, publicKey),
      url: `http://127.0.0.1:${port}`,
      output: () => log,
      signal: (sig) => void child.kill(sig),
      async stop() {
        if (child.exitCode !== null || (child.signalCode !== null && child.signalCode !== 'SIGSTOP' && child.signalCode !== 'SIGCONT')) return;
        child.kill('SIGCONT');
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      },
    };
  }
}
