/**
 * Copies the Lua scripts (src/**\/*.lua) into dist/ beside the compiled modules that load them
 * (src/store/lua.ts reads each script relative to its module): tsc compiles TypeScript only.
 *
 * `node scripts/copy-lua.mjs [root]` copies under `root` (default: this repository); the bench's snapshots
 * call `copyLua(dir)` the same way.
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Copies every .lua file under `root`/src to the same path under `root`/dist; returns how many. */
export function copyLua(root) {
  const src = join(root, 'src');
  let n = 0;
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.lua')) {
        const to = join(root, 'dist', relative(src, path));
        mkdirSync(dirname(to), { recursive: true });
        copyFileSync(path, to);
        n += 1;
      }
    }
  };
  walk(src);
  return n;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  copyLua(resolve(process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), '..')));
}
