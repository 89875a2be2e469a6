/**
 * Gateway CPU per chat call, the steady figure on a shared machine (issue #15): the whole R3 path (built
 * portcullis on a real redis-server, against the bench's instant mock) loaded at saturation for a while, and
 * the CPU time its process used (user + system, from /proc, 10 ms ticks) divided by the answers. Throughput
 * moves with whatever else runs on the machine; CPU per call hardly does. Optionally writes a V8 CPU profile
 * of the measured window and prints its top functions (mapped back to src/*.ts).
 *
 *   npx tsx bench/cpu-per-call.ts [--size small|large] [--stream] [--seconds 8] [--rounds 3] [--profile]
 *                                [--gateway auto|worktree|head]
 *
 * Prints the median of the rounds (and each round) as ms of gateway CPU per call, plus Redis' CPU per call.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { bodyTemplate } from './harness/bodies.js';
import { runLoad } from './harness/load.js';
import { startServer } from './harness/processes.js';
import { buildSnapshot, REPO, startPortcullis, type SourceChoice } from './harness/portcullis.js';
import { findRedisPid, HZ, processTicks } from './harness/cpu-usage.js';
import { summariseProfile } from './harness/cpu-profile.js';

const { values: args } = parseArgs({
  options: {
    size: { type: 'string', default: 'small' },
    stream: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
    profile: { type: 'boolean', default: false },
    gateway: { type: 'string', default: 'auto' },
  },
});
const noPin = { enabled: false, harnessCore: null, serverCore: null, how: 'not pinned' };
const log = (s: string) => process.stdout.write(`${s}\n`);

const mock = await startServer({ name: 'mock upstream', args: ['--import', 'tsx', join(REPO, 'bench/harness/mock-upstream.ts')], pin: noPin, ready: /listening (\d+)/ });
const redis = await startRedisServer();
const snapshot = await buildSnapshot(args.gateway as SourceChoice, log);
const profDir = mkdtempSync(join(tmpdir(), 'portcullis-cpu-per-call-'));
const gw = await startPortcullis({
  snapshot,
  mockBaseUrl: `http://127.0.0.1:${mock.port}/v1`,
  redisUrl: redis.url,
  pin: noPin,
  ...(args.profile ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] } : {}),
});
try {
  const body = bodyTemplate({ size: args.size as 'small' | 'large', stream: args.stream! });
  const target = { url: `${gw.apiUrl}/v1/chat/completions`, headers: { authorization: `Bearer ${gw.token}` }, body, connections: Number(args.connections) };
  const redisPid = findRedisPid(redis.port);
  log(`gateway ${snapshot.source}; ${args.size}${args.stream ? ', streaming' : ''}; warming up`);
  await runLoad({ ...target, durationSec: 4 });
  const rounds: Array<{ gw: number; redis: number; rps: number }> = [];
  const from = Number(process.hrtime.bigint() / 1000n);
  for (let i = 0; i < Number(args.rounds); i++) {
    const g0 = processTicks(gw.server.pid);
    const r0 = redisPid ? processTicks(redisPid) : 0;
    const r = await runLoad({ ...target, durationSec: Number(args.seconds), minAnswers: 1 });
    const g = ((processTicks(gw.server.pid) - g0) * (1000 / HZ)) / r.ok;
    const rd = redisPid ? ((processTicks(redisPid) - r0) * (1000 / HZ)) / r.ok : Number.NaN;
    rounds.push({ gw: g, redis: rd, rps: r.rps });
    log(`  round ${i + 1}: ${g.toFixed(3)} ms gateway CPU per call (+ ${rd.toFixed(3)} redis), ${Math.round(r.rps)} req/s, ${r.errors} errors`);
  }
  const to = Number(process.hrtime.bigint() / 1000n);
  const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  log(`median: ${median(rounds.map((r) => r.gw)).toFixed(3)} ms gateway CPU per call (+ ${median(rounds.map((r) => r.redis)).toFixed(3)} redis), ${Math.round(median(rounds.map((r) => r.rps)))} req/s`);
  if (args.profile) {
    await gw.server.stop();
    const file = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      const s = summariseProfile(join(profDir, file), snapshot.dir, [from, to], 40);
      log('top functions by self time (share of busy time):');
      for (const e of s.top) log(`  ${e.selfPct.toFixed(1).padStart(5)} %  ${e.function}  ${e.location}`);
      log('portcullis functions by inclusive time (share of busy time):');
      for (const e of s.inclusive.slice(0, 30)) log(`  ${e.selfPct.toFixed(1).padStart(5)} %  ${e.function}  ${e.location}`);
      log(`by owner: ${s.byOwner.map((o) => `${o.owner} ${o.selfPct.toFixed(1)} %`).join(', ')}`);
      log(`profile: ${join(profDir, file)}`);
    }
  }
} finally {
  await gw.server.stop();
  await mock.stop();
  await redis.stop();
  snapshot.remove();
  if (!args.profile) rmSync(profDir, { recursive: true, force: true });
}
