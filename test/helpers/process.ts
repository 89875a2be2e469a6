/**
 * A gateway in its own process (`src/main.ts`), for what an in-process gateway cannot show: a second
 * instance that can be SIGKILLed mid-job, or `npm start` as a newcomer meets it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { untilOutput } from './wait.js';
import { editFile, FREE_PORTS, relaxStrangerLimits, REPO, TEST_DATA_KEY } from './gateway.js';

export interface GatewayProcess {
  child: ChildProcess;
  apiUrl: string;
  adminUrl: string;
  stdout(): string;
  /** The output so far, once it matches `re` (the child exiting first, or a generous deadline, fails). */
  output(re: RegExp): Promise<string>;
  stop(): Promise<void>;
}

export async function spawnGateway(root: string, env: Record<string, string>): Promise<GatewayProcess> {
  // One test address signs up far more than a person would (see relaxStrangerLimits).
  editFile(root, 'config/gateway.yaml', relaxStrangerLimits);
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'src/main.ts')], {
    env: { ...process.env, PORTCULLIS_ROOT: root, ...FREE_PORTS, PORTCULLIS_WATCH: '0', LOG_LEVEL: 'error', PORTCULLIS_DATA_KEY: TEST_DATA_KEY, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await untilOutput(child, () => out, /admin API on \S+\n/, 'the gateway to start');
  const [, apiUrl, adminUrl] = /serving the API on (\S+) and the admin API on (\S+)/.exec(out)!;
  return {
    child,
    apiUrl: apiUrl!,
    adminUrl: adminUrl!,
    stdout: () => out,
    output: (re) => untilOutput(child, () => out, re, 'the gateway'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
