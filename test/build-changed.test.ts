/**
 * `npm start` builds only what changed: each step of the build (tsc, the knowledge index, the web pages)
 * runs when its inputs are newer than its last success, and not otherwise.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { REPO } from './helpers/gateway.js';
// @ts-expect-error: a plain .mjs script, no declarations
import { staleSteps } from '../scripts/build-changed.mjs';

const stale = (root: string): string[] => (staleSteps(root) as Array<{ step: { name: string } }>).map((s) => s.step.name);

function file(root: string, rel: string, at: number): void {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), 'x');
  utimesSync(join(root, rel), at / 1000, at / 1000);
}

describe('npm start builds only what changed', () => {
  const t0 = Date.now() - 3_600_000;
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'pcl-build-'));
    for (const rel of [
      'src/main.ts',
      'src/knowledge/search.ts',
      'tsconfig.json',
      'data/knowledge/cwe.json',
      'web/src/console/main.ts',
      'web/console.html',
      'scripts/web-build.mjs',
    ])
      file(root, rel, t0);
  });

  it('builds every step the first time', () => {
    expect(stale(root)).to.deep.equal(['tsc', 'knowledge index', 'web pages']);
  });

  it('builds nothing when every step is newer than its inputs', () => {
    for (const stamp of ['dist/main.js', 'dist/knowledge/search-index.json.gz', 'web/dist/console.html']) file(root, stamp, t0 + 1_000);
    expect(stale(root)).to.deep.equal([]);
  });

  it('rebuilds only the step whose inputs changed', () => {
    for (const stamp of ['dist/main.js', 'dist/knowledge/search-index.json.gz', 'web/dist/console.html']) file(root, stamp, t0 + 1_000);
    file(root, 'web/src/console/main.ts', t0 + 2_000);
    expect(stale(root)).to.deep.equal(['web pages']);
    file(root, 'src/main.ts', t0 + 3_000);
    expect(stale(root)).to.deep.equal(['tsc', 'web pages']);
    file(root, 'data/knowledge/cwe.json', t0 + 4_000);
    expect(stale(root)).to.deep.equal(['tsc', 'knowledge index', 'web pages']);
  });

  it('npm start runs it instead of the whole build', () => {
    const scripts = JSON.parse(execFileSync('node', ['-p', 'JSON.stringify(require("./package.json").scripts)'], { cwd: REPO }).toString()) as Record<
      string,
      string
    >;
    expect(scripts['start']).to.equal(
      'bash scripts/intent-encoder.sh && node scripts/build-changed.mjs && MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-2} NODE_OPTIONS="--max-semi-space-size=32 ${NODE_OPTIONS:-}" exec node dist/main.js',
    );
  });
});
