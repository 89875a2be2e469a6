/**
 * The Redis round trips of a chat call, alone (bench/harness/redis-round-trips.ts, also reported by
 * `npm run bench`): a gateway in this process on a real redis-server and the recording upstream, one
 * token's first call and one steady call, each command printed as MONITOR saw it.
 *
 *   npx tsx bench/redis-round-trips.ts [--json]
 *
 * Exits 0 whatever the count: this is a figure to watch, not a gate.
 */
import { startWorld } from '../test/helpers/world.js';
import { measureRoundTrips } from './harness/redis-round-trips.js';

const json = process.argv.includes('--json');
const w = await startWorld();
try {
  const r = await measureRoundTrips({
    redisUrl: w.redis.url,
    call: (token, n) => w.gw.chat(token, { model: 'shared-general-a', max_tokens: 64, messages: [{ role: 'user', content: `round trips ${n}` }] }),
    newToken: async () => (await w.gw.principal()).token,
  });
  if (json) {
    process.stdout.write(`${JSON.stringify(r)}\n`);
  } else {
    process.stdout.write(`a token's first call: ${r.first.length} commands\n${r.first.map((l) => `  ${l}`).join('\n')}\n`);
    process.stdout.write(
      `a steady call: ${r.steady.length} commands (budget ${r.budget.commands} in ${r.budget.roundTrips} round trips: ${r.met ? 'met' : 'OVER'})\n${r.steady.map((l) => `  ${l}`).join('\n')}\n`,
    );
  }
} finally {
  await w.stop();
}
