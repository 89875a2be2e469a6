/**
 * The root hooks (test/helpers/hooks.ts) fail a test that leaves a rejection nobody handles, since a gateway
 * running in the test process would have ended on it; and a run that does not end on its own fails naming
 * what holds it open. Proven on fixture suites run by their own mocha, with the project's .mocharc.json, so
 * this run's hooks are not the ones under test.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const mochaBin = createRequire(import.meta.url).resolve('mocha/bin/mocha.js');

interface JsonTest {
  fullTitle: string;
  err: { message?: string; stack?: string };
}
interface JsonReport {
  stats: { passes: number; failures: number };
  passes: JsonTest[];
  failures: JsonTest[];
}

async function runFixture(file: string, env: Record<string, string> = {}): Promise<{ code: number | null; report: JsonReport; stderr: string }> {
  const child = spawn(process.execPath, [mochaBin, '--reporter', 'json', file], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, report: JSON.parse(stdout) as JsonReport, stderr };
}

describe('mocha root hooks: a rejection nobody handles fails its test', () => {
  let run: Awaited<ReturnType<typeof runFixture>>;
  before(async () => {
    run = await runFixture('test/fixtures/mocha/unhandled-rejections.ts');
  });

  it('fails the run', () => {
    expect(run.code).to.not.equal(0);
  });

  it('fails the async, the sync and the done-style test that leaked one, with the reason and its stack', () => {
    const byTitle = new Map(run.report.failures.map((f) => [f.fullTitle, f.err]));
    for (const [title, reason] of [
      ['leaks async test leaving a rejection behind', 'async leak'],
      ['leaks sync test leaving a rejection behind', 'sync leak'],
      ['leaks done-style test leaving a rejection behind', 'callback leak'],
    ] as const) {
      const err = byTitle.get(title);
      expect(err, title).to.not.equal(undefined);
      expect(err!.message).to.equal(`Unhandled promise rejection (it would end a gateway): ${reason}`);
      expect(err!.stack).to.include('unhandled-rejections.ts');
    }
  });

  it('fails the hook that leaked one, and so the tests under it', () => {
    const hook = run.report.failures.find((f) => f.fullTitle.includes('a hook that leaks') && f.fullTitle.includes('before all'));
    expect(hook?.err.message).to.include('hook leak');
    expect(run.report.passes.map((p) => p.fullTitle)).to.not.include('a hook that leaks never runs once its hook failed');
  });

  it('passes the tests that leaked nothing, the next one included', () => {
    expect(run.report.passes.map((p) => p.fullTitle).sort()).to.deep.equal(['leaks clean test after them', 'leaks handles its own rejection']);
    expect(run.report.stats).to.include({ passes: 2, failures: 4 });
  });
});

describe('mocha root hooks: a run held open says what holds it', function () {
  this.timeout(60_000);
  let run: Awaited<ReturnType<typeof runFixture>>;
  before(async () => {
    run = await runFixture('test/fixtures/mocha/held-open.ts', { HOOKS_CLOSE_GRACE_MS: '1000' });
  });

  it('fails a run whose tests all passed, once it has not ended', () => {
    expect(run.report.stats).to.include({ passes: 3, failures: 0 });
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('[hooks] the run did not end 1 s after its last suite; what holds it open:');
  });

  it('names the Redis client never closed by the test that connected it, and not the one whose connect gave up', () => {
    const report = run.stderr.slice(run.stderr.indexOf('what holds it open'));
    expect(report).to.match(/redis client to 127\.0\.0\.1:\d+, connected by "held open by a client never closed"/);
    expect(report).to.not.contain('by nothing');
  });

  it('names the interval never cleared by where it was set, and not the one cleared', () => {
    const report = run.stderr.slice(run.stderr.indexOf('what holds it open'));
    expect(report).to.match(/an interval of 60000 ms, set at\n\s+at .*held-open\.ts/);
    expect(report).to.not.contain('45000');
  });
});
