/**
 * The intent encoder's weights checked at start (src/guard/model/encoder.ts), on the installed weights:
 * the digest taken a chunk at a time is the one the manifest records; a copy with one byte changed is
 * refused; and the check no longer holds the whole file in memory. Read whole, the 71.6 MB of weights
 * were the process's largest allocation and raised its start-up peak RSS by as much (65 -> 135 MiB); the
 * bound below is a quarter of the file, far above what a chunked read adds (its 1 MiB buffer) and below
 * what a whole read does even when the loader's own peak before the check hides part of it.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { encoderFiles, readEncoderManifest, sha256OfFile } from '../../src/guard/model/encoder.js';
import { REPO } from '../helpers/gateway.js';

const wholeHash = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('guard: the intent encoder weights checked at start', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'portcullis-weights-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('hashes the installed weights, a chunk at a time, to the digest the manifest records', () => {
    const manifest = readEncoderManifest();
    const { weights, sha256 } = encoderFiles();
    expect(sha256).to.equal(manifest.files[manifest.weights]);
    expect(sha256OfFile(weights)).to.equal(sha256);
  });

  it('gives the digest of the whole file whatever its size against the chunk (empty, one chunk exactly, a byte more)', () => {
    const MiB = 1 << 20;
    for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 17]) {
      const file = join(dir, `bytes-${size}`);
      const data = Buffer.alloc(size);
      for (let i = 0; i < size; i++) data[i] = (i * 31 + (i >> 11)) & 0xff;
      writeFileSync(file, data);
      expect(sha256OfFile(file), `${size} bytes`).to.equal(wholeHash(file));
    }
  });

  it('refuses at start a copy of the weights with one byte changed', () => {
    const { weights, addon, manifest } = encoderFiles();
    const home = join(dir, `${manifest.package.name}-${manifest.package.version}`);
    mkdirSync(home);
    const copy = join(home, basename(weights));
    copyFileSync(weights, copy);
    symlinkSync(addon, join(home, 'e5.node'));
    const at = Math.floor(statSync(copy).size / 2);
    const fd = openSync(copy, 'r+');
    try {
      const b = Buffer.alloc(1);
      readSync(fd, b, 0, 1, at);
      b[0] = b[0]! ^ 0x01;
      writeSync(fd, b, 0, 1, at);
    } finally {
      closeSync(fd);
    }
    expect(() => encoderFiles('guardrails-intent-encoder.json', dir)).to.throw(
      new RegExp(`have sha256 [0-9a-f]{64}, the manifest pins ${manifest.files[manifest.weights]}`),
    );
  });

  it('adds less than a quarter of the weights to the start-up peak RSS', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/fixtures/guard/encoder-files-rss.ts')], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).to.equal(0);
    const { sha256, before, after } = JSON.parse(out.trim()) as { sha256: string; before: number; after: number };
    const weights = statSync(encoderFiles().weights).size;
    expect(sha256).to.equal(encoderFiles().sha256);
    expect((after - before) * 1024, `peak RSS ${before} KiB before the check, ${after} KiB after; weights ${weights} bytes`).to.be.below(weights / 4);
    console.log(`      start-up check: peak RSS ${before} -> ${after} KiB (+${after - before} KiB) for ${(weights / 1e6).toFixed(1)} MB of weights`);
  });
});
