/**
 * `npm run bench -- --quick` runs to its end and writes a well-formed result: every row present (R4 may be
 * skipped, with a reason), every figure a finite number, and the Markdown beside it. Speed is not asserted:
 * a quick run lasts a fraction of a second per measurement on a machine shared with the rest of the suite.
 * It writes into a temporary folder, never over bench/results/latest.*, and leaves the README alone.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from '../helpers/gateway.js';
import type { BenchResults } from '../../bench/harness/results.js';
import type { LoadResult } from '../../bench/harness/load.js';

const mtime = (p: string) => (existsSync(p) ? statSync(p).mtimeMs : null);

function expectFiniteLoad(r: LoadResult | undefined, what: string, requireAnswers: boolean): void {
  expect(r, what).to.be.an('object');
  expect(Number.isFinite(r!.rps), `${what}: rps`).to.equal(true);
  expect(r!.rps, `${what}: rps`).to.be.at.least(0);
  if (requireAnswers) expect(r!.ok, `${what}: answers`).to.be.above(0);
  if (r!.ok > 0) {
    for (const k of ['p50', 'p90', 'p99', 'mean', 'max'] as const) expect(Number.isFinite(r!.latency[k]), `${what}: latency ${k}`).to.equal(true);
  }
}

describe('bench --quick', function () {
  this.timeout(360_000);
  let out: string;

  before(() => {
    out = mkdtempSync(join(tmpdir(), 'portcullis-bench-test-'));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('completes and writes a well-formed result into the folder it is given', async () => {
    const latest = join(REPO, 'bench/results/latest.json');
    const readme = join(REPO, 'bench', 'README.md');
    const before = { latest: mtime(latest), readme: mtime(readme) };
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO, 'bench/run.ts'), '--quick', '--out', out], {
      cwd: REPO,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    child.stdout.on('data', (c: Buffer) => (log += c.toString()));
    child.stderr.on('data', (c: Buffer) => (log += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, log.slice(-4000)).to.equal(0);

    const r = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8')) as BenchResults;
    expect(r.schema).to.equal('portcullis-bench/1');
    expect(r.mode).to.equal('quick');
    // The servers under test run on a supported Node (22 or 24: the bench's own may be older), and it says which.
    expect(r.machine.serverNode?.version, 'the Node of the servers under test').to.match(/^(22|24)\./);
    expect(r.rows.map((x) => x.id)).to.deep.equal(['R0', 'R1', 'R2', 'R3', 'R4', 'R5']);
    for (const row of r.rows) {
      // The peers are optional (Portkey from npm, LiteLLM from PyPI): a skipped one says why.
      if ((row.id === 'R4' || row.id === 'R5') && row.status !== 'ok') expect(row.reason, `a skipped ${row.id} says why`).to.be.a('string').and.not.equal('');
      else expect(row.status, `${row.id}: ${row.reason ?? ''}`).to.equal('ok');
    }
    const ok = r.rows.filter((x) => x.status === 'ok').map((x) => x.id);
    expect(r.scenarios.length).to.be.above(0);
    for (const s of r.scenarios) {
      expect(s.r1MaxRps, `${s.id}: R1 max`).to.be.above(0);
      for (const id of ok) expectFiniteLoad(s.saturation[id], `${s.id} ${id} saturation`, true);
      expect(s.rates.map((x) => x.fraction)).to.deep.equal([0.25, 0.5, 0.75]);
      for (const at of s.rates) {
        expect(Number.isFinite(at.targetRps) && at.targetRps > 0, `${s.id} target rate`).to.equal(true);
        for (const id of ok) expectFiniteLoad(at.results[id], `${s.id} ${id} @${at.fraction}`, false);
      }
    }
    for (const d of r.derived) expect(Number.isFinite(d.rps) && Number.isFinite(d.rpsRatio), `${d.scenario} ${d.row}`).to.equal(true);
    expect(r.budget.map((b) => b.scenario)).to.deep.equal(r.scenarios.map((s) => s.id));
    expect(r.profiles.length).to.be.above(0);
    for (const p of r.profiles) {
      expect(p.summary, p.error).to.be.an('object');
      expect(p.summary!.top.length).to.be.above(0);
      for (const e of p.summary!.top) expect(Number.isFinite(e.selfPct)).to.equal(true);
    }
    expect(
      r.workers?.map((w) => w.workers),
      'R3 and R1 at 1, 2 and all cores',
    ).to.deep.equal([1, 2, availableParallelism()]);
    expect(r.workers!.at(-1)!.cores, 'all cores: unpinned').to.equal('unpinned');
    for (const w of r.workers!) {
      expect(w.rps, `R3 with ${w.workers} workers answers`).to.be.above(0);
      expect(w.errors, `R3 with ${w.workers} workers: errors`).to.equal(0);
      expect(w.r1Rps, `R1 with ${w.workers} processes answers`).to.be.above(0);
      expect(w.r1Errors, `R1 with ${w.workers} processes: errors`).to.equal(0);
    }
    // R3 on an `always` and an `everysec` Redis, with the disk's fsync time.
    expect(Number.isFinite(r.durability!.fsyncMs.p50)).to.equal(true);
    expect(r.durability!.runs.map((x) => x.appendfsync)).to.deep.equal(['always', 'everysec']);
    for (const x of r.durability!.runs) {
      expect(x.rps, `R3 on ${x.appendfsync}`).to.be.above(0);
      expect(x.errors, `R3 on ${x.appendfsync}: errors`).to.equal(0);
      // What happened during its p99 window; the AOF was rewritten just before it, so no rewrite began in it.
      expect(x.context?.redisForks, `R3 on ${x.appendfsync}: Redis forks during its p99 window`).to.equal(0);
      expect(x.context?.gcOver10ms, `R3 on ${x.appendfsync}: its GC pauses`).to.be.an('object');
      // The added latency is the median over pairs of windows (R0, then R3), every pair kept, each timed
      // from the write and from its scheduled slot.
      expect(x.pairs?.length, `R3 on ${x.appendfsync}: pairs of windows`).to.equal(r.settings.p99Rounds);
      for (const p of x.pairs!.filter((y) => y.r0.answers > 0 && y.r3.answers > 0))
        expect(Number.isFinite(p.p99Added) && Number.isFinite(p.p99AddedFromSlot), `R3 on ${x.appendfsync}: a pair's p99 added`).to.equal(true);
    }
    for (const s of r.scenarios.filter((x) => x.r3Own)) expect(s.r3Own!.context, `${s.id}: what happened during R3's own p99 window`).to.be.an('object');
    expect(r.guardScan!.length, 'the guardrail scan figure').to.be.above(0);
    for (const g of r.guardScan!) expect(g.chars).to.equal(524_288);
    expect(Number.isFinite(r.memory.r3PeakRssMiB)).to.equal(true);
    expect(r.memory.soak).to.be.an('object');

    const md = readFileSync(join(out, 'latest.md'), 'utf8');
    expect(md).to.match(/^# portcullis benchmark \(quick\)/);
    for (const id of ok) expect(md).to.include(`| ${id} `);
    expect(md).to.include('## R3 CPU profile under load');
    expect(md).to.include('## Several workers (PORTCULLIS_WORKERS)');
    expect(md).to.include('## Durability: R3 on `appendfsync always` and on `everysec`');
    expect(md).to.include("Over each row's fixed-rate windows");
    expect(md).to.match(/, servers under test \(R1–R4\) on Node (22|24)\.|Node (22|24)\.\S+ \(servers under test and harness\)/);
    expect(md).to.include('## Performance targets');
    expect(md.split('## Performance targets')[1]!.split('\n## ')[0]!.match(/^\| /gm), 'seven figures and the header').to.have.length(8);

    expect({ latest: mtime(latest), readme: mtime(readme) }, 'bench/results and the README are left alone').to.deep.equal(before);
  });
});
