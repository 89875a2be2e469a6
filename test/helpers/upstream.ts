/**
 * Starts the recording upstream (test/fixtures/upstream/recording-upstream.ts) as its own process and gives
 * tests a handle to read what it received and to change how it behaves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';

const SCRIPT = fileURLToPath(new URL('../fixtures/upstream/recording-upstream.ts', import.meta.url));

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  /** True when the caller closed the connection before the answer was written. */
  aborted?: boolean;
}

export interface RecordingUpstream {
  baseUrl: string;
  requests(): Promise<RecordedRequest[]>;
  behave(b: Record<string, unknown>): Promise<void>;
  /** Sends the answers a `hold` behaviour kept back. */
  release(): Promise<void>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `port` and `listenAfterMs` play an origin that is still starting: the process is up at once, but the port
 * refuses connections until it listens, `listenAfterMs` later. The promise resolves once it listens.
 */
export async function startRecordingUpstream(opts: { port?: number; listenAfterMs?: number } = {}): Promise<RecordingUpstream> {
  const env = {
    ...process.env,
    ...(opts.port ? { UPSTREAM_PORT: String(opts.port) } : {}),
    ...(opts.listenAfterMs ? { UPSTREAM_LISTEN_AFTER_MS: String(opts.listenAfterMs) } : {}),
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'], env });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`recording upstream exited (${code})`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const post = async (path: string, body: unknown = {}) => {
    const res = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
    await res.arrayBuffer();
  };
  return {
    baseUrl: `${base}/v1`,
    async requests() {
      const res = await fetch(`${base}/_recorded`);
      return ((await res.json()) as { requests: RecordedRequest[] }).requests;
    },
    behave: (b) => post('/_behaviour', b),
    release: () => post('/_release'),
    reset: () => post('/_reset'),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
