/**
 * Writes a run's results: latest.json (everything, raw and derived) and latest.md (the tables, the R3
 * profile summary, memory), and — for a full run — the README's Performance section, replaced between
 * its heading and the next `## ` heading and nothing else.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AIM, FLOOR, performanceTargets, type BenchResults, type Derived } from './results.js';
import { describeContext } from './window-context.js';

const int = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
const ratio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : '—');
const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(x !== 0 && Math.abs(x) < 10 ? 2 : 1) : '—');
const cpuMs = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '—');
const pct = (x: number) => `${x.toFixed(1)} %`;
const mib = (x: number | null | undefined) => (x != null && Number.isFinite(x) ? `${x.toFixed(1)} MiB` : '—');

/** "2.1, 3.4, 12.0" (ms): each pair's p99 added, in the order run. */
function pairList(pairs: Array<{ p99Added: number }>): string {
  return pairs.map((p) => (Number.isFinite(p.p99Added) ? p.p99Added.toFixed(1) : '—')).join(', ');
}

function addedCell(d: Derived, fraction: number, key: 'p50' | 'p90' | 'p99'): string {
  const a = d.at.find((x) => x.fraction === fraction);
  if (!a) return '—';
  if (d.row === 'R0') return '0';
  return a.overloaded ? `${ms(a[key])} ⚠` : ms(a[key]);
}

function scenarioTable(r: BenchResults, scenarioId: string): string[] {
  const s = r.scenarios.find((x) => x.id === scenarioId)!;
  const lines: string[] = [];
  const rates = s.rates.map((x) => `${int(x.targetRps)} (${Math.round(x.fraction * 100)} %)`).join(', ');
  const r0 = s.rates.find((x) => x.fraction === 0.5)?.results.R0;
  lines.push(`### ${s.label}: ${int(s.bodyBytes)}-byte requests`, '');
  lines.push(
    `R1 maximum ${int(s.r1MaxRps)} req/s; fixed rates ${rates} req/s. Added latency: ms over R0 at the same rate (R0's own p50 there: ${ms(r0?.latency.p50 ?? Number.NaN)} ms). CPU: the server's own CPU time per answer at saturation.`,
    '',
  );
  lines.push(
    '| row | max req/s | × R1 | CPU ms/req | × R1 | p50 added @25 % | p50 added @50 % | p50 added @75 % | p50 added @50 % × R1 | p90 added @50 % | p99 added @50 % |',
  );
  lines.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const row of r.rows) {
    const d = r.derived.find((x) => x.scenario === s.id && x.row === row.id);
    if (!d) {
      lines.push(`| ${row.id} ${row.name} | ${row.status}: ${row.reason ?? ''} | | | | | | | | | |`);
      continue;
    }
    const half = d.at.find((a) => a.fraction === 0.5);
    const cpu = `${cpuMs(d.cpuMsPerReq)}${d.redisCpuMsPerReq !== undefined ? ` + ${cpuMs(d.redisCpuMsPerReq)} redis` : ''}${d.row === 'R0' ? ' (mock)' : ''}`;
    lines.push(
      `| ${row.id} ${row.name} | ${int(d.rps)} | ${ratio(d.rpsRatio)} | ${cpu} | ${d.row === 'R0' ? '—' : ratio(d.cpuRatio)} | ${addedCell(d, 0.25, 'p50')} | ${addedCell(d, 0.5, 'p50')} | ${addedCell(d, 0.75, 'p50')} | ${
        d.row === 'R0' ? '—' : ratio(half?.p50Ratio ?? Number.NaN)
      } | ${addedCell(d, 0.5, 'p90')} | ${addedCell(d, 0.5, 'p99')} |`,
    );
  }
  const errs = r.rows
    .map((row) => {
      const all = [s.saturation[row.id], ...s.rates.map((x) => x.results[row.id])].filter((x) => x !== undefined);
      const e = all.reduce((n, x) => n + x.errors, 0);
      return e > 0 ? `${row.id}: ${e} failed requests (${JSON.stringify(Object.assign({}, ...all.map((x) => x.statuses)))})` : null;
    })
    .filter((x) => x !== null);
  if (s.r3Own) {
    const o = s.r3Own;
    lines.push(
      '',
      `R3 at 50 % of its own maximum (${int(o.targetRps)} req/s${o.R3.overloaded ? ', not held ⚠' : ''}): ${o.pairs?.length ? `in the pair with the median p99, ` : ''}p50 ${ms(o.R3.latency.p50)} / p90 ${ms(o.R3.latency.p90)} / p99 ${ms(o.R3.latency.p99)} ms; added over R0 ${ms(o.p50Added)} / ${ms(o.p90Added)} / ${ms(o.p99Added)} ms` +
        (o.pairs?.length
          ? ` (each the median over ${o.pairs.length} pairs of windows; p99 added per pair ${pairList(o.pairs)}${Number.isFinite(o.p99AddedFromSlot) ? `; timed from the scheduled slot ${ms(o.p99AddedFromSlot)}` : ''})`
          : '') +
        '.' +
        (o.context ? ` During ${o.pairs && o.pairs.length > 1 ? 'those windows' : 'that window'}: ${describeContext(o.context)}.` : ''),
    );
  }
  if (errs.length) lines.push('', `Errors: ${errs.join('; ')}.`);
  const contended = r.contention.contended.filter((c) => c.startsWith(`${s.id} `));
  if (contended.length)
    lines.push('', `Contended (other processes and the hypervisor took > ${r.contention.threshold} cores even after a re-run): ${contended.join(', ')}.`);
  lines.push('');
  return lines;
}

function targetsTable(r: BenchResults): string[] {
  const out = ['| figure | this run | target | |', '|---|--:|--:|:-:|'];
  for (const t of performanceTargets(r)) out.push(`| ${t.figure} | ${t.shown} | ${t.target} | ${t.met === null ? '—' : t.met ? 'met' : '**missed**'} |`);
  return out;
}

function budgetTable(r: BenchResults): string[] {
  const lines = [
    `| scenario | R3 throughput × R1 | R3 p50 added @50 % of R1's max | R3 p50 added @50 % of its own max | budget (≥ ${FLOOR.throughput}×, < ${FLOOR.p50Ms} ms) | aim (≥ ${AIM.throughput}×, < ${AIM.p50Ms} ms) |`,
    '|---|--:|--:|--:|:-:|:-:|',
  ];
  for (const b of r.budget) {
    const sc = r.scenarios.find((s) => s.id === b.scenario)!;
    const own = sc.r3Own ? `${ms(sc.r3Own.p50Added)} ms (${int(sc.r3Own.targetRps)} req/s)` : '—';
    lines.push(
      `| ${sc.label} | ${ratio(b.throughputRatio)} | ${ms(b.p50AddedMsAt50)} ms${b.overloadedAt50 ? ' ⚠ overloaded' : ''} | ${own} | ${b.floor ? 'met' : '**missed**'} | ${b.aim ? 'met' : 'missed'} |`,
    );
  }
  return lines;
}

/** The compact table for the README: every scenario and row, throughput and p50 added at 50 %. */
function summaryTable(r: BenchResults): string[] {
  const lines = ['| scenario | row | max req/s | × R1 | CPU ms/req | × R1 | p50 added @50 % (ms) | × R1 |', '|---|---|--:|--:|--:|--:|--:|--:|'];
  for (const s of r.scenarios) {
    for (const row of r.rows) {
      const d = r.derived.find((x) => x.scenario === s.id && x.row === row.id);
      if (!d) {
        lines.push(`| ${s.label} | ${row.id} ${row.name} | ${row.status} | | | | | |`);
        continue;
      }
      const half = d.at.find((a) => a.fraction === 0.5);
      const added =
        d.row === 'R0' ? `(harness ${ms(s.rates.find((x) => x.fraction === 0.5)?.results.R0?.latency.p50 ?? Number.NaN)})` : addedCell(d, 0.5, 'p50');
      const cpu = `${cpuMs(d.cpuMsPerReq)}${d.redisCpuMsPerReq !== undefined ? ` + ${cpuMs(d.redisCpuMsPerReq)} redis` : ''}`;
      lines.push(
        `| ${s.label} | ${row.id} ${row.name} | ${int(d.rps)} | ${ratio(d.rpsRatio)} | ${d.row === 'R0' ? `(mock ${cpu})` : cpu} | ${d.row === 'R0' ? '—' : ratio(d.cpuRatio)} | ${added} | ${d.row === 'R0' ? '—' : ratio(half?.p50Ratio ?? Number.NaN)} |`,
      );
    }
  }
  return lines;
}

function profileSection(r: BenchResults): string[] {
  const lines: string[] = [];
  for (const p of r.profiles) {
    const label = r.scenarios.find((s) => s.id === p.scenario)?.label ?? p.scenario;
    lines.push(`### ${label}`, '');
    if (!p.summary) {
      lines.push(`No profile: ${p.error ?? 'not written'}.`, '');
      continue;
    }
    const s = p.summary;
    lines.push(
      `${int(p.rps)} req/s at saturation while profiled; ${(s.totalMs / 1000).toFixed(1)} s of samples under load (${int(s.samples)} samples), main thread busy ${pct(s.busyPct)}. Self time, as a share of busy time:`,
      '',
    );
    lines.push('| # | function | where | owner | self |', '|--:|---|---|---|--:|');
    s.top.forEach((e, i) => lines.push(`| ${i + 1} | \`${e.function}\` | ${e.location ? `\`${e.location}\`` : ''} | ${e.owner} | ${pct(e.selfPct)} |`));
    lines.push(
      '',
      'By owner: ' +
        s.byOwner
          .slice(0, 12)
          .map((o) => `${o.owner} ${pct(o.selfPct)}`)
          .join(', ') +
        '.',
      '',
    );
    lines.push(
      'portcullis functions by inclusive time (callees included, counted once per sample). A Koa stage resumed after an `await` also holds the synchronous part of the stages it calls with `next()`, so stage figures overlap:',
      '',
    );
    lines.push('| function | where | inclusive |', '|---|---|--:|');
    for (const e of s.inclusive.slice(0, 15)) lines.push(`| \`${e.function}\` | \`${e.location}\` | ${pct(e.selfPct)} |`);
    lines.push('');
  }
  return lines;
}

function memorySection(r: BenchResults): string[] {
  const m = r.memory;
  const lines = [`Peak RSS of R3 over the whole run (VmHWM): ${mib(m.r3PeakRssMiB)}.`];
  if (m.soak) {
    const s = m.soak;
    const every = Math.max(1, Math.round(s.samples.length / 12));
    lines.push(
      '',
      `Soak: ${s.durationSec} s of small non-streaming calls at saturation (${int(s.rps)} req/s, ${s.errors} errors). RSS ${mib(s.startMiB)} at the start, ${mib(s.endMiB)} at the end (min ${mib(s.minMiB)}, max ${mib(s.maxMiB)}); slope over the second half ${s.slopeMiBPerMin.toFixed(2)} MiB/min. **${s.verdict}**`,
      '',
      `RSS (MiB) over time: ${s.samples
        .filter((_, i) => i % every === 0 || i === s.samples.length - 1)
        .map((x) => `${x.t.toFixed(s.durationSec < 20 ? 1 : 0)} s: ${x.rssMiB.toFixed(0)}`)
        .join(' · ')}`,
    );
  }
  if (m.redis) {
    const perCall = m.redis.jobs > 0 ? (m.redis.usedMemoryMiB * 1024) / m.redis.jobs : Number.NaN;
    lines.push(
      '',
      `Redis after the run: ${m.redis.keys.toLocaleString('en-US')} keys for ${m.redis.jobs.toLocaleString('en-US')} R3 calls (jobs), ${mib(m.redis.usedMemoryMiB)} used: about ${perCall.toFixed(1)} KiB per call, kept for the retention period (jobs.retentionMs, 24 h by default; receipts longer).`,
    );
  }
  return lines;
}

/** Which Node ran what: the servers under test (R1-R4) may run on another Node than the harness. */
function nodes(r: BenchResults): string {
  const s = r.machine.serverNode;
  if (!s || s.version === r.machine.node) return `Node ${s?.version ?? r.machine.node}${s ? ' (servers under test and harness)' : ''}`;
  return `servers under test (R1–R4) on Node ${s.version}, harness on Node ${r.machine.node}`;
}

export function markdown(r: BenchResults): string {
  const lines: string[] = [];
  lines.push(`# portcullis benchmark (${r.mode})`, '');
  lines.push(
    `Run ${r.startedAt} in ${Math.round(r.elapsedSec)} s by \`npm run bench${r.mode === 'quick' ? ' -- --quick' : ''}\`. ` +
      `${r.machine.cpus} × ${r.machine.cpuModel}, ${nodes(r)}, ${r.machine.platform}. Gateway: ${r.gateway.source}, store ${r.gateway.store}.` +
      (r.gateway.note ? ` Note: ${r.gateway.note}.` : ''),
    '',
  );
  lines.push(`Pinning: ${r.machine.pinning.how}.`, '');
  lines.push(
    `During a kept measurement, other processes on this (shared) machine used at most ${r.contention.maxForeignCores.toFixed(2)} cores${r.contention.maxStealCores === undefined ? '' : ` and the hypervisor took at most ${r.contention.maxStealCores.toFixed(2)} (steal: CPU time given to other virtual machines while ours wanted it)`}; ${r.contention.retries} measurement(s) were re-run because together they took more than ${r.contention.threshold}.`,
    '',
  );
  lines.push(
    `Load: autocannon, ${r.settings.connections} keep-alive connections, every request body different (a nonce). Every row, and every separate R3 start (durability, worker counts, profiles), is first warmed up on large and then small bodies${r.settings.warmup ? ` (${r.settings.warmup.largeSec} s and ${r.settings.warmup.smallSec} s)` : ', 20 s of small ones in a full run'}, since R3 goes on compiling its path for about half a minute of load (this also spends R3's free allowance, so the matrix measures its paid path). Per scenario and row: ${r.settings.warmupSec} s warm-up, ${r.settings.saturationSec} s at saturation, then ${r.settings.rateSec} s at each fixed rate (${r.settings.loadFractions.map((f) => `${f * 100} %`).join(', ')} of R1's maximum, evenly paced), rows interleaved.`,
    '',
  );
  lines.push('Rows:', '');
  for (const row of r.rows) lines.push(`- **${row.id} ${row.name}**: ${row.what}${row.status !== 'ok' ? ` — ${row.status}: ${row.reason}` : ''}`);
  lines.push('', '## Performance targets', '', ...targetsTable(r), '');
  lines.push('## Budget', '', ...budgetTable(r), '');
  lines.push(
    '## Throughput and added latency',
    '',
    '⚠ = the row could not hold that rate (it achieved less than 95 % of it): the latency there is queueing.',
    '',
  );
  for (const s of r.scenarios) lines.push(...scenarioTable(r, s.id));
  lines.push(
    '## R3 CPU profile under load',
    '',
    '`node --cpu-prof` on a separate R3 process, samples taken while it was loaded at saturation (start-up and warm-up left out).',
    '',
  );
  lines.push(...profileSection(r));
  if (r.durability) {
    const d = r.durability;
    lines.push('## Durability: R3 on `appendfsync always` and on `everysec`', '');
    lines.push(
      `An fsync on Redis' disk here takes p50 ${ms(d.fsyncMs.p50)} ms, p99 ${ms(d.fsyncMs.p99)} ms (512-byte append, then fdatasync, ${200} times): \`always\` adds about that to every money write. R3 small, non-streaming, each on a fresh Redis${r.settings.p99Rounds === undefined ? "; latency added over R0 at 50 % of that run's own maximum, one window each." : `, warmed up as the matrix's rows; latency added over R0 at 50 % of that run's own maximum, the median over ${r.settings.p99Rounds} pair(s) of ${r.settings.rateSec}-s windows, R0 then R3 (bench/harness/half-load.ts).`}`,
      '',
    );
    lines.push(
      '| appendfsync | max req/s | CPU ms/req (+ redis) | rate held | p50 added (ms) | p99 added (ms) | p99 added per pair (ms) | p99 added from the slot (ms) | budget |',
      '|---|--:|--:|--:|--:|--:|--:|--:|---|',
    );
    for (const x of d.runs) {
      const budget =
        x.appendfsync === 'everysec' ? 'p50 ≤ 1 ms, p99 ≤ 5 ms' : `p50 ≤ ${ms(1 + d.fsyncMs.p50)} ms, p99 ≤ ${ms(5 + d.fsyncMs.p99)} ms (everysec + fsync)`;
      lines.push(
        `| ${x.appendfsync} | ${int(x.rps)} | ${x.cpuMsPerReq.toFixed(3)} + ${x.redisCpuMsPerReq.toFixed(3)} | ${int(x.targetRps)}${x.overloaded ? ' ⚠' : ''} | ${ms(x.p50Added)} | ${ms(x.p99Added)} | ${x.pairs?.length ? pairList(x.pairs) : '—'} | ${x.p99AddedFromSlot === undefined ? '—' : ms(x.p99AddedFromSlot)} | ${budget} |`,
      );
    }
    const during = d.runs.filter((x) => x.context);
    if (during.length) {
      lines.push(
        '',
        "Over each row's fixed-rate windows (bench/harness/window-context.ts; a window's p99 is its 1 % slowest answers, so one pause of tens of milliseconds sets it, hence the median over pairs; Redis' AOF is rewritten before each pair, so that no rewrite child shares the harness core during the windows: what one does is measured apart, bench/tail.ts):",
        '',
      );
      for (const x of during) lines.push(`- ${x.appendfsync}: ${describeContext(x.context!)}`);
    }
    lines.push('');
  }
  if (r.workers?.length) {
    lines.push(
      '## Several workers (PORTCULLIS_WORKERS)',
      '',
      'Small non-streaming calls at saturation: R3 with N worker processes on one port, and R1 with N node:cluster processes on the same cores (1, 2, and one per core unpinned, as `PORTCULLIS_WORKERS=auto` runs).',
      '',
    );
    lines.push(
      '| cores | processes | pinned to | R3 max req/s | R3 × 1 worker | R1 max req/s | R3 / R1 | R3 p50 (ms) | errors (R3, R1) |',
      '|---|--:|---|--:|--:|--:|--:|--:|--:|',
    );
    const one = r.workers.find((w) => w.workers === 1)?.rps ?? Number.NaN;
    for (const w of r.workers)
      lines.push(
        `| ${w.label ?? String(w.workers)} | ${w.workers} | ${w.cores} | ${int(w.rps)} | ${ratio(w.rps / one)} | ${w.r1Rps === undefined ? '—' : int(w.r1Rps)} | ${w.r1Rps ? ratio(w.rps / w.r1Rps) : '—'} | ${ms(w.p50)} | ${w.errors}, ${w.r1Errors ?? '—'} |`,
      );
    lines.push('');
  }
  if (r.guardIntent?.length) {
    lines.push(
      '## Guard CPU per call, intent model',
      '',
      'bench/guard-intent.ts: `classify` CPU (process, worker threads included), median; before = the word scorer alone, after = the multilingual model deciding the calls it reads.',
      '',
    );
    lines.push('| call | chars | route | before: CPU ms | after: CPU ms | read by the model |', '|---|--:|---|--:|--:|---|');
    for (const g of r.guardIntent)
      lines.push(`| ${g.input} | ${g.chars} | ${g.team} | ${g.before.toFixed(2)} | ${g.after.toFixed(2)} | ${g.model ? 'yes' : 'no'} |`);
    lines.push('');
  }
  if (r.redisRoundTrips) {
    const t = r.redisRoundTrips;
    lines.push('## Redis commands per call', '');
    lines.push(
      `What R3 sends to Redis for one small call, as MONITOR sees it (bench/harness/redis-round-trips.ts; \`npx tsx bench/redis-round-trips.ts\` alone): ${t.steady.length} commands for a token in use, ${t.first.length} for a token's first call. Budget: ${t.budget.commands} commands in ${t.budget.roundTrips} round trips (token, rate limit and job lookup together; reservation; settlement): ${t.met ? 'met' : '**over**'}.`,
      '',
      '```',
      ...t.steady,
      '```',
      '',
    );
  }
  lines.push('## Memory', '', ...memorySection(r), '');
  if (r.notes.length) lines.push('## Notes', '', ...r.notes.map((n) => `- ${n}`), '');
  return `${lines.join('\n')}\n`;
}

/** The README's Performance section body (without its heading). */
export function readmeSection(r: BenchResults): string {
  const lines = [
    '`npm run bench` (about 18 minutes on 2 cores; `npm run bench -- --quick`, about 30 seconds, for a smoke run) measures, in one',
    'interleaved run against the same instant mock upstream: **R0** the load generator straight to the mock (the',
    'harness ceiling), **R1** a bare `node:http` + undici forwarder (the physical limit of a Node gateway), **R2** the',
    'same inside Koa, **R3** portcullis on a real redis-server with the whole path (PAT lookup, policy decision,',
    "guardrail scan, reservation, job, forwarding, settlement, receipt), **R4** Portkey's open-source gateway and **R5**",
    'the LiteLLM proxy (installed by the bench into `bench/.venv`). Then R3 on an `appendfsync always` and an',
    "`everysec` Redis with the disk's fsync time, R3 and R1 at 1, 2 and all cores, and the guardrail scan of the",
    'largest admitted input. Every request body differs, so R3 never re-attaches to a finished job. Throughput is at',
    "saturation; added latency is a row's latency minus R0's at the same fixed rate (50 % of R1's maximum here);",
    "at half of R3's own maximum it is the median over pairs of windows, R0 then R3 ([Method](#method-the-warm-up-and-the-added-latency)).",
    "The Node rows (R1, R2, R3, R4) and the guard's scan and intent figures run on the newest supported Node that",
    '`scripts/node.sh` has unpacked (Node 24, what the image and the unit run; `--node current|22|24` chooses),',
    'whatever Node runs the bench itself.',
    'Full tables, the R3 CPU profile and memory: [results/latest.md](results/latest.md) (raw: `latest.json`).',
    '',
    `Latest run: ${r.startedAt.slice(0, 10)}, ${r.machine.cpus} × ${r.machine.cpuModel}, ${nodes(r)}, gateway ${r.gateway.source}; ${r.machine.pinning.how}.`,
    '',
    ...summaryTable(r),
    '',
    'Performance targets (per core: one R3 worker against one R1 process; latency on `everysec`):',
    '',
    ...targetsTable(r),
    '',
    `Budget: R3 ≥ ${FLOOR.throughput}× R1 throughput and < ${FLOOR.p50Ms} ms p50 added at 50 % load (aim ${AIM.throughput}×, ${AIM.p50Ms} ms):`,
    '',
    ...budgetTable(r),
    '',
  ];
  const soak = r.memory.soak;
  if (soak || r.memory.r3PeakRssMiB) {
    lines.push(`R3 peak RSS ${mib(r.memory.r3PeakRssMiB)}${soak ? `; over a ${soak.durationSec}-second soak at saturation: ${soak.verdict}` : ''}.`, '');
  }
  return lines.join('\n');
}

export function writeResults(dir: string, r: BenchResults): void {
  writeFileSync(join(dir, 'latest.json'), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(dir, 'latest.md'), markdown(r));
}

/** Replaces the body of `## Performance` in the README (up to the next `## `), leaving the rest as it is. */
export function updateReadme(readmePath: string, r: BenchResults): void {
  const text = readFileSync(readmePath, 'utf8');
  const start = text.indexOf('\n## Performance\n');
  if (start < 0) throw new Error('README has no "## Performance" section');
  const bodyStart = start + '\n## Performance\n'.length;
  const next = text.indexOf('\n## ', bodyStart);
  const end = next < 0 ? text.length : next + 1;
  writeFileSync(readmePath, `${text.slice(0, bodyStart)}\n${readmeSection(r)}\n${text.slice(end)}`);
}
