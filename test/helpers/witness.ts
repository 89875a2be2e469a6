/**
 * A real witness for a suite: the omniwitness of the Go module github.com/transparency-dev/witness (a C2SP
 * tlog-witness), which scripts/setup.sh builds into its pinned tools folder. It gets a fresh Ed25519 key,
 * knows one log (`origin` with its verifier key, passed with --additional_logs) and keeps its state in
 * memory, on a free loopback port. Nothing of it is imitated: the gateway POSTs to its /add-checkpoint.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pinnedTool, startToolServer } from './tool-server.js';
import { witnessVerifierKey } from '../../src/receipts/witness/cosignature.js';

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
  const server = await startToolServer(
    'the witness',
    pinnedTool('witness', 'WITNESS_VERSION'),
    ([port]) => [
      '--listen',
      `127.0.0.1:${port}`,
      '--metrics_listen',
      '',
      '--private_key_path',
      join(dir, 'key'),
      '--additional_logs',
      join(dir, 'logs.yaml'),
      '--logtostderr',
    ],
    { keepChars: 20_000 },
  );
  return {
    name: opts.name,
    vkey: witnessVerifierKey(opts.name, publicKey),
    url: `http://127.0.0.1:${server.ports[0]}`,
    output: server.output,
    signal: server.signal,
    stop: server.stop,
  };
}
