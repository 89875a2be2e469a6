/**
 * One way to Redis, held by the source tree itself: no Lua inside a TypeScript file under src/ (every
 * script is a `.lua` file loaded through src/store/lua.ts), every `.lua` file is loaded by some module
 * and every file a module loads exists, and the build's copy step puts each script where the compiled
 * module will look for it.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO } from '../helpers/gateway.js';
// @ts-expect-error: a plain .mjs build script without type declarations
import { copyLua } from '../../scripts/copy-lua.mjs';

const SRC = join(REPO, 'src');

function files(dir: string, ext: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? files(path, ext) : e.name.endsWith(ext) ? [path] : [];
  });
}

/** The `.lua` paths a module names (string literals ending in .lua), resolved against the module's folder. */
function loadedBy(module: string): string[] {
  const text = readFileSync(module, 'utf8');
  return [...text.matchAll(/'([^']+\.lua)'/g)].map((m) => resolve(dirname(module), m[1]!));
}

describe('Lua scripts', () => {
  const modules = files(SRC, '.ts');
  const scripts = files(SRC, '.lua');

  it('live in .lua files: no TypeScript file under src/ holds Lua', () => {
    const lua = /redis\.call\(|redis\.pcall\(|\bKEYS\[\d|\bARGV\[\d/;
    const offenders = modules.filter((m) => lua.test(readFileSync(m, 'utf8'))).map((m) => relative(REPO, m));
    expect(offenders).to.deep.equal([]);
  });

  it('are all loaded by a module, and every script a module loads exists', () => {
    const loaded = new Set(modules.flatMap(loadedBy));
    expect(scripts.filter((s) => !loaded.has(s)).map((s) => relative(REPO, s))).to.deep.equal([]);
    expect([...loaded].filter((s) => !existsSync(s)).map((s) => relative(REPO, s))).to.deep.equal([]);
  });

  it('are copied into dist/ beside the compiled modules by the build', () => {
    const root = mkdtempSync(join(tmpdir(), 'pcl-lua-'));
    try {
      for (const rel of ['src/a/lua/x.lua', 'src/b/c/lua/y.lib.lua', 'src/a/z.ts']) {
        mkdirSync(dirname(join(root, rel)), { recursive: true });
        writeFileSync(join(root, rel), rel);
      }
      expect(copyLua(root)).to.equal(2);
      expect(readFileSync(join(root, 'dist/a/lua/x.lua'), 'utf8')).to.equal('src/a/lua/x.lua');
      expect(readFileSync(join(root, 'dist/b/c/lua/y.lib.lua'), 'utf8')).to.equal('src/b/c/lua/y.lib.lua');
      expect(existsSync(join(root, 'dist/a/z.ts'))).to.equal(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('are what `npm run build` and `npm start` copy', () => {
    const scriptsOf = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).scripts as Record<string, string>;
    expect(scriptsOf['build']).to.include('node scripts/copy-lua.mjs');
    expect(readFileSync(join(REPO, 'scripts/build-changed.mjs'), 'utf8')).to.include('node scripts/copy-lua.mjs');
  });
});
