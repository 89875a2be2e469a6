/**
 * The receipt log's second implementation: test/receipts/tlogcheck, a small Go program on Go's
 * golang.org/x/mod/sumdb/tlog and sumdb/note. scripts/setup.sh builds it into the pinned tools folder; when
 * it is not there yet, it is built here (once per run) with `go build`, which needs Go and the module proxy.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REPO } from './gateway.js';

export interface TlogJob {
  vkey?: string;
  /** The leaves' data (base64): the Go side hashes them itself. */
  records: string[];
  checkpoints?: string[];
  inclusion?: Array<{ index: number; size: number; proof: string[] }>;
  consistency?: Array<{ from: number; to: number; proof: string[] }>;
  roots?: Array<{ size: number; root: string }>;
  /** Hash tiles as served (C2SP tlog-tiles path without the height, data base64). */
  tiles?: Array<{ path: string; data: string }>;
}

export interface TlogResult {
  checked: Partial<Record<'roots' | 'checkpoints' | 'inclusion' | 'consistency' | 'tiles', number>>;
  errors: string[] | null;
}

let built: Promise<string> | undefined;

async function binary(): Promise<string> {
  // The pinned path, as scripts/tools.mjs and scripts/setup.sh name it.
  const version = /^TLOGCHECK_VERSION=(\S+)/m.exec(readFileSync(join(REPO, 'scripts/tools.env'), 'utf8'))?.[1];
  const pinned = join(process.env['PORTCULLIS_TOOLS'] || join(homedir(), '.cache', 'portcullis', 'tools'), `tlogcheck-${version}`, 'tlogcheck');
  if (existsSync(pinned)) return pinned;
  built ??= (async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'tlogcheck-')), 'tlogcheck');
    process.stderr.write(`tlogcheck: ${pinned} is missing (scripts/setup.sh builds it); building it with go build for this run\n`);
    try {
      await promisify(execFile)('go', ['build', '-o', out, '.'], { cwd: join(REPO, 'test/receipts/tlogcheck'), env: { ...process.env, CGO_ENABLED: '0' } });
    } catch (err) {
      throw new Error(`cannot build the Go cross-checker (needs Go and the Go module proxy; or run scripts/setup.sh): ${(err as Error).message}`, {
        cause: err,
      });
    }
    return out;
  })();
  return built;
}

/** Runs one job through Go's tlog; resolves with what it checked and the errors it found. */
export async function tlogCheck(job: TlogJob): Promise<TlogResult> {
  const bin = await binary();
  const child = spawn(bin, [], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const done = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  child.stdin.end(JSON.stringify(job));
  const code = await done;
  if (code === 2 || !out.trim()) throw new Error(`tlogcheck failed (${code}): ${err}`);
  return JSON.parse(out) as TlogResult;
}
