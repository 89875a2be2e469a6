// Builds the compiled guardrail scanner: `node scripts/scanner-build.mjs` (needs rustup's cargo; the
// toolchain is pinned in scanner/rust-toolchain.toml, and the wasm32-unknown-unknown target is added when
// missing). Writes
//   scanner/build/scanner.wasm      the module src/guard/compiled.ts loads
//   scanner/build/manifest.json     { sourceHash, sources, toolchain }
// Both are committed, so neither `npm start`, `npm test` nor the container build needs Rust;
// test/guard/scanner-build.test.ts fails when the crate's sources no longer match the manifest's hash (a
// stale module).
//
// `--print-hash` prints the current sources' hash and exits (the test compares it with the manifest).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const crate = join(root, 'scanner');
const target = 'wasm32-unknown-unknown';

/** The crate's sources: repo-relative POSIX paths of its manifest, lock file, toolchain file and .rs files, sorted. */
export function scannerSources() {
  const found = ['scanner/Cargo.toml', 'scanner/Cargo.lock', 'scanner/rust-toolchain.toml'];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.rs')) found.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(join(crate, 'src'));
  return found.sort();
}

/** sha256 over each source's path and content, in path order, NUL-separated so no two inputs collide. */
export function scannerSourceHash() {
  const hash = createHash('sha256');
  for (const path of scannerSources()) {
    hash
      .update(path)
      .update('\0')
      .update(readFileSync(join(root, path)))
      .update('\0');
  }
  return hash.digest('hex');
}

if (process.argv.includes('--print-hash')) {
  console.log(scannerSourceHash());
  process.exit(0);
}

// rustup's binaries, also when the shell that runs this has not sourced ~/.cargo/env.
const cargoBin = join(process.env.CARGO_HOME || join(homedir(), '.cargo'), 'bin');
const env = { ...process.env, PATH: `${cargoBin}:${process.env.PATH ?? ''}` };
const run = (cmd, args) => execFileSync(cmd, args, { cwd: crate, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

// A fresh machine has rustup and the pinned toolchain but maybe not the wasm target.
const toolchain = /channel\s*=\s*"([^"]+)"/.exec(readFileSync(join(crate, 'rust-toolchain.toml'), 'utf8'))[1];
if (!run('rustup', ['target', 'list', '--installed', '--toolchain', toolchain]).split('\n').includes(target)) {
  run('rustup', ['target', 'add', target, '--toolchain', toolchain]);
}
run('cargo', ['build', '--release', '--locked', '--target', target]);
const out = join(crate, 'build');
mkdirSync(out, { recursive: true });
copyFileSync(join(crate, 'target', target, 'release', 'portcullis_scanner.wasm'), join(out, 'scanner.wasm'));
const manifest = { sourceHash: scannerSourceHash(), sources: scannerSources(), toolchain: run('rustc', ['--version']).trim() };
writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
console.log(`scanner: built scanner/build/scanner.wasm (${manifest.toolchain}, sources ${manifest.sourceHash.slice(0, 12)})`);
