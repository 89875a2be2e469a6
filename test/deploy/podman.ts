/**
 * The deploy tier's tools: podman (with the settings these machines need, deploy/podman/containers.conf),
 * the image built once per test run from the local base (scripts/image-base.sh, itself built once per
 * machine), Debian's redis-server as an image, Helm at its pinned path, and waiting for a listener to be
 * ready. A command that fails rejects with the tail of what it printed, so a failing build fails the suite
 * with its reason.
 */
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const CONTAINERS_CONF = join(REPO, 'deploy/podman/containers.conf');
/** The tag the tier builds; compose and the chart are run with it. */
export const IMAGE = 'localhost/portcullis:test';

function toolsEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(REPO, 'scripts/tools.env'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}
const TOOLS_DIR = process.env['PORTCULLIS_TOOLS'] ?? join(homedir(), '.cache/portcullis/tools');
export const HELM = join(TOOLS_DIR, `helm-${toolsEnv()['HELM_VERSION']}`, 'helm');

export interface Ran {
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects on a non-zero exit with the command and the tail of its output. */
export function run(cmd: string, args: string[], opts: { env?: Record<string, string>; cwd?: string; input?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? REPO,
      env: { ...process.env, CONTAINERS_CONF, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve({ stdout, stderr });
      const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-40).join('\n');
      reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${tail}`));
    });
    // A command that reads no input may exit before this is written: that is not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
  });
}

export const podman = (args: string[], opts: { env?: Record<string, string>; input?: string } = {}) => run('podman', args, opts);

/** podman's flags for a container on these machines (runc and cgroupfs come from CONTAINERS_CONF). */
export const RUN_FLAGS = ['--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];

let base: Promise<string> | undefined;
/** The local base image (Debian minbase + Node 24 + npm), built once per machine. */
export function baseImage(): Promise<string> {
  base ??= run('bash', ['scripts/image-base.sh']).then((r) => r.stdout.trim());
  return base;
}

let image: Promise<string> | undefined;
/**
 * deploy/Containerfile built on the local base, once per test run (its layers are cached: an unchanged
 * lockfile reuses the dependency install). The machine's CA bundle goes in as a build secret, for a
 * TLS-inspecting proxy in front of the npm registry.
 */
export function gatewayImage(): Promise<string> {
  image ??= baseImage().then(async (from) => {
    await podman([
      'build',
      '--format',
      'docker',
      '--network',
      'host',
      ...RUN_FLAGS,
      '-f',
      'deploy/Containerfile',
      '--build-arg',
      `BASE=${from}`,
      '--secret',
      'id=npm-ca,src=/etc/ssl/certs/ca-certificates.crt',
      '-t',
      IMAGE,
      '.',
    ]);
    return IMAGE;
  });
  return image;
}

let redis: Promise<string> | undefined;
/** Debian's redis-server on the local base: the compose file's Redis, since no registry of images is reachable. */
export function redisImage(): Promise<string> {
  redis ??= baseImage().then(async (from) => {
    const tag = `localhost/portcullis-test-redis:${from.split(':')[1]}`;
    const exists = await podman(['image', 'exists', tag]).then(
      () => true,
      () => false,
    );
    if (!exists)
      await podman([
        'build',
        '--network',
        'host',
        ...RUN_FLAGS,
        '-f',
        'test/deploy/redis.Containerfile',
        '--build-arg',
        `BASE=${from}`,
        '-t',
        tag,
        'test/deploy',
      ]);
    return tag;
  });
  return redis;
}

/** Polls `url` until it answers 200; rejects after `timeoutMs` with the last answer or error. */
export async function ready(url: string, timeoutMs = 120_000, alive?: () => Promise<void>): Promise<void> {
  const started = Date.now();
  let last: string;
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `${res.status} ${await res.text()}`;
    } catch (err) {
      last = (err as Error).message;
    }
    if (alive) await alive();
    if (Date.now() - started > timeoutMs) throw new Error(`${url} never became ready: ${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The demo PAT a gateway prints at start (`demo PAT (blue team): pcl_pat_…`), from its log. */
export function demoPat(log: string): string {
  const m = /demo PAT \(blue team\): (pcl_pat_\S+)/.exec(log);
  if (!m) throw new Error(`no demo PAT in the gateway's output:\n${log.slice(-2000)}`);
  return m[1]!;
}
