/**
 * The last good configuration, for a worker that starts while a refused edit sits on disk. Under
 * PORTCULLIS_WORKERS the supervisor replaces a worker that dies; the replacement loads the root as it is now,
 * and a bad edit the running workers refused (kept serving the previous configuration) would stop it from
 * starting. So every worker, after it starts or applies a reload, copies the configuration folders it serves
 * (catalog/, rules/, config/, policies/) into the supervisor's folder (PORTCULLIS_LAST_GOOD_DIR), and a
 * worker whose root is refused at start serves that copy instead, saying so; its reloads still read the root.
 *
 * The copy is taken after the load, so an edit landing in between could reach it: it is published only when
 * it loads to exactly the versions being served, else dropped (the previous copy stays).
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from './load.js';
import type { Runtime } from './compile.js';

type Env = Record<string, string | undefined>;

const FOLDERS = ['catalog', 'rules', 'config', 'policies'];
let published: string | null = null;

/** Copies what `runtime` was compiled from into `dir` as the last good configuration; false when it changed meanwhile. */
export function saveLastGood(dir: string, root: string, runtime: Runtime, env: Env): boolean {
  const gen = mkdtempSync(join(dir, 'gen-'));
  try {
    for (const f of FOLDERS) if (existsSync(join(root, f))) cpSync(join(root, f), join(gen, f), { recursive: true });
    const copy = loadConfig(gen, env);
    // Every document by its content hash, and the policy by its wasm's: the copy is what is served, or dropped.
    const served = runtime.bundle as unknown as Record<string, { sha256?: string }>;
    const copied = copy as unknown as Record<string, { sha256?: string }>;
    const same =
      Object.keys(copied).every((k) => k === 'root' || copied[k]?.sha256 === served[k]?.sha256) &&
      (!existsSync(join(gen, 'policies')) || wasmVersion(join(gen, 'policies/build/admission.wasm')) === runtime.versions.policy);
    if (!same) {
      rmSync(gen, { recursive: true, force: true });
      return false;
    }
    // Atomic publication: a symlink renamed over `current`, so a starting worker sees one whole copy or the last.
    const link = join(dir, `current-${process.pid}`);
    rmSync(link, { force: true });
    symlinkSync(gen, link);
    renameSync(link, join(dir, 'current'));
    if (published && published !== gen) rmSync(published, { recursive: true, force: true });
    published = gen;
    return true;
  } catch {
    rmSync(gen, { recursive: true, force: true });
    return false;
  }
}

/** The published last good copy in `dir`, or null. */
export function lastGoodRoot(dir: string | undefined): string | null {
  if (!dir) return null;
  try {
    return realpathSync(join(dir, 'current'));
  } catch {
    return null;
  }
}

function wasmVersion(path: string): string | null {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex').slice(0, 12);
  } catch {
    return null;
  }
}
