/**
 * The graph host's worker threads (src/mcp/graph-pool.ts) do not keep a process up: a pool whose thread
 * answered a query and sits idle leaves nothing that holds the process, which then ends by itself. A
 * thread's port once stayed referenced (its 'message' listener was added after `unref`), so a stopped
 * gateway's process, or a test run that had called a graph tool, stayed up until the thread's idle end.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { REPO } from '../helpers/gateway.js';
import { untilOutput } from '../helpers/wait.js';

describe('graph pool: idle threads do not hold the process', () => {
  it('answers a query, then holds nothing (no worker port) and the process ends by itself', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/fixtures/mcp/graph-pool-call.ts')], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    const line = await untilOutput(child, () => out, /\n/, 'the pool answer');
    const report = JSON.parse(line.trim()) as { id: string | null; threads: number; holding: string[] };
    expect(report.id).to.equal('CWE-89');
    // The thread is still there, idle: it is its port that must not hold the process.
    expect(report.threads).to.equal(1);
    expect(report.holding).to.not.include('MessagePort');
    expect(await exited).to.deep.equal([0, null]);
  });
});
