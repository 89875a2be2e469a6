/**
 * The committed compiled scanner (scanner/build/scanner.wasm + manifest.json) must be built from the crate in
 * the tree by the pinned toolchain: a Rust edit without `node scripts/scanner-build.mjs` fails here rather
 * than scanning with the old module. (The test reads files only; it never builds Rust.)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const stale = 'scanner/build is stale: run `node scripts/scanner-build.mjs` and commit scanner/build/';

describe('guard: the committed compiled scanner', () => {
  const manifest = JSON.parse(readFileSync(`${ROOT}scanner/build/manifest.json`, 'utf8')) as { sourceHash: string; sources: string[]; toolchain: string };

  it('was built from the crate sources in the tree', () => {
    const current = execFileSync(process.execPath, [`${ROOT}scripts/scanner-build.mjs`, '--print-hash'], { encoding: 'utf8' }).trim();
    expect(manifest.sourceHash, stale).to.equal(current);
  });

  it('was built by the pinned toolchain (scanner/rust-toolchain.toml)', () => {
    const pinned = /channel\s*=\s*"([^"]+)"/.exec(readFileSync(`${ROOT}scanner/rust-toolchain.toml`, 'utf8'))?.[1];
    expect(manifest.toolchain, stale).to.match(new RegExp(`^rustc ${pinned!.replace(/\./g, '\\.')} `));
  });
});
