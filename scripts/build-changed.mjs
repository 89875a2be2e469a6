/**
 * What `npm start` builds: only the steps of `npm run build` whose inputs changed since that step last
 * ran, so a second start (or the first one after `npm ci`, whose prepare script built everything) goes
 * straight to the banner. Each step has its inputs (folders and files, walked for the newest modification
 * time) and a stamp: one of its own outputs, which every run of the step rewrites; a step runs when its
 * stamp is missing or older than its newest input. A step that fails gets its stamp dated 1970, so the next
 * start runs it again. `npm run build` still builds everything.
 *
 * `node scripts/build-changed.mjs` builds; `--dry-run` prints what would be built and builds nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The steps of `npm run build`, in order. Paths are relative to the repository root. */
export const STEPS = [
  {
    name: 'tsc',
    inputs: ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    ignore: [],
    stamp: 'dist/main.js',
    // tsc compiles TypeScript only: the Lua scripts the modules load are copied beside them.
    command: ['sh', '-c', 'npx tsc -p tsconfig.build.json && node scripts/copy-lua.mjs'],
  },
  {
    name: 'knowledge index',
    inputs: ['data/knowledge', 'src/knowledge'],
    ignore: [],
    stamp: 'dist/knowledge/search-index.json.gz',
    command: ['node', 'dist/knowledge/build-index.js'],
  },
  {
    name: 'web pages',
    inputs: ['web', 'scripts/web-build.mjs', 'package-lock.json'],
    ignore: ['web/dist'],
    stamp: 'web/dist/console.html',
    command: ['node', 'scripts/web-build.mjs'],
  },
];

/** The newest modification time (ms) under a path, skipping ignored paths; 0 when it does not exist. */
function newest(root, rel, ignore) {
  const path = join(root, rel);
  if (ignore.includes(rel) || !existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  // Files only: a folder's own time moves when a build writes beside its inputs (the index in src/knowledge).
  let max = 0;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(root, join(rel, entry), ignore));
  return max;
}

/** The steps whose stamp is missing or older than their newest input, each with the reason. */
export function staleSteps(root) {
  const stale = [];
  for (const step of STEPS) {
    const stamp = join(root, step.stamp);
    const input = Math.max(...step.inputs.map((i) => newest(root, i, step.ignore)));
    if (!existsSync(stamp)) stale.push({ step, why: 'never built' });
    else if (input > statSync(stamp).mtimeMs) stale.push({ step, why: 'changed since the last build' });
  }
  return stale;
}

function main() {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const stale = staleSteps(root);
  if (process.argv.includes('--dry-run')) {
    for (const { step, why } of stale) process.stdout.write(`${step.name}: ${why}\n`);
    return 0;
  }
  if (stale.length === 0) {
    process.stderr.write('build: up to date (tsc, knowledge index, web pages)\n');
    return 0;
  }
  for (const { step, why } of stale) {
    process.stderr.write(`build: ${step.name} (${why})\n`);
    const run = spawnSync(step.command[0], step.command.slice(1), { cwd: root, stdio: ['ignore', 2, 2] });
    if (run.status !== 0) {
      if (existsSync(join(root, step.stamp))) utimesSync(join(root, step.stamp), 0, 0);
      return run.status ?? 1;
    }
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main();
