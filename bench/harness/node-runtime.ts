/**
 * Which Node runs the servers under test. The product runs on Node 24 (the image, the unit, `.ci/run`'s main
 * tier), and Node's own releases change what a call costs (V8, the HTTP parser, undici), so the bench runs
 * the Node rows (R1, R2, R3, R4) on the newest supported line it finds unpacked by scripts/node.sh, and only
 * falls back to the Node running the bench when none is. It never unpacks one itself: a bench run does not
 * download. `--node` picks one: `auto` (the default, as above), `current` (the Node running the bench), or a
 * supported major (22, 24), which is unpacked by scripts/node.sh if it is not there yet.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface NodeRuntime {
  /** The `node` binary. */
  path: string;
  /** `v24.21.0` */
  version: string;
  /** How it was chosen, for the results header. */
  how: string;
}

/** Newest first: the lines scripts/tools.env pins. */
const SUPPORTED = ['24', '22'] as const;

function pinnedVersions(repo: string): Record<string, string> {
  const env = readFileSync(join(repo, 'scripts/tools.env'), 'utf8');
  const out: Record<string, string> = {};
  for (const major of SUPPORTED) {
    const m = new RegExp(`^NODE${major}_VERSION=(\\S+)`, 'm').exec(env);
    if (m) out[major] = m[1]!;
  }
  return out;
}

const current = (how: string): NodeRuntime => ({ path: process.execPath, version: process.version, how });

export function chooseNode(repo: string, wanted: string): NodeRuntime {
  if (wanted === 'current') return current('the Node running the bench (--node current)');
  if (wanted !== 'auto') {
    if (!(SUPPORTED as readonly string[]).includes(wanted)) throw new Error(`--node takes auto, current, 22 or 24, not ${wanted}`);
    if (process.versions.node.split('.')[0] === wanted) return current(`--node ${wanted}, the Node running the bench`);
    const bin = execFileSync('bash', [join(repo, 'scripts/node.sh'), wanted], { encoding: 'utf8' }).trim();
    const path = join(bin, 'node');
    return { path, version: execFileSync(path, ['--version'], { encoding: 'utf8' }).trim(), how: `--node ${wanted} (scripts/node.sh)` };
  }
  const tools = process.env['PORTCULLIS_TOOLS'] ?? join(homedir(), '.cache/portcullis/tools');
  const versions = pinnedVersions(repo);
  for (const major of SUPPORTED) {
    if (process.versions.node.split('.')[0] === major) return current(`Node ${major}, the newest supported line here, runs the bench itself`);
    const version = versions[major];
    const path = version ? join(tools, `node-${version}`, 'bin', 'node') : '';
    if (path && existsSync(path)) return { path, version: `v${version}`, how: `the newest supported line unpacked by scripts/node.sh` };
  }
  return current('no supported Node unpacked by scripts/node.sh, so the Node running the bench');
}
