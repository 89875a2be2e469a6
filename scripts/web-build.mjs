/**
 * Builds the pages (web/) into web/dist/: one esbuild bundle per page (ES modules, minified, with source
 * maps), plus the HTML templates and the stylesheet copied as they are. `npm run build` runs it after tsc;
 * the console and auth hosts serve web/dist/ (src/pages/serve.ts).
 */
import { build } from 'esbuild';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'web', 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });
await build({
  entryPoints: { 'sign-in': join(root, 'web/src/sign-in.ts'), console: join(root, 'web/src/console/main.ts') },
  outdir: join(out, 'assets'),
  bundle: true,
  format: 'esm',
  splitting: true,
  minify: true,
  sourcemap: true,
  target: ['chrome120', 'firefox120', 'safari17'],
  logLevel: 'warning',
});
for (const file of ['sign-in.html', 'console.html']) cpSync(join(root, 'web', file), join(out, file));
cpSync(join(root, 'web/style.css'), join(out, 'assets/style.css'));
cpSync(join(root, 'web/favicon.svg'), join(out, 'assets/favicon.svg'));
