/**
 * What waiting for a replica costs a paid call (store.replicaAcks): the same in-process gateway on a real
 * primary, once with a live replica it must wait for and once alone (nothing to wait for), the same paid
 * calls sent one at a time and then 16 at a time, interleaved rounds. Prints the median and p99 latency of
 * each and the difference: the price of "no acknowledged charge is lost when the master dies".
 *
 *   npx tsx bench/replica-acks.ts [--calls 300] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { startRecordingUpstream } from '../test/helpers/upstream.js';
import { editFile, startTestGateway, type TestGateway } from '../test/helpers/gateway.js';
import { body, smallLimitsRoot } from '../test/helpers/billing.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '300' }, rounds: { type: 'string', default: '3' } } });
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

async function run(gw: TestGateway, token: string, concurrency: number): Promise<number[]> {
  const times: number[] = [];
  let left = CALLS;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const t = process.hrtime.bigint();
        const r = await gw.chat(token, body());
        if (r.status !== 200) throw new Error(`call answered ${r.status}`);
        times.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  return times;
}

const upstream = await startRecordingUpstream();
await upstream.behave({ mode: 'echo', usage: { prompt_tokens: 10, completion_tokens: 90 } });
const [withReplica, alone] = await Promise.all([startRedisServer(), startRedisServer()]);
const replica = await startRedisServer({ replicaOf: withReplica.port });
await new Promise((r) => setTimeout(r, 1500)); // the replica's first sync
/** Every call paid, and no rate limit in the way of a benchmark. */
const root = () => {
  const r = smallLimitsRoot(0);
  editFile(r, 'config/gateway.yaml', (t) => t.replace('perPrincipal: 600', 'perPrincipal: 100000000'));
  return r;
};
const gateways = {
  replica: await startTestGateway({ root: root(), upstreamUrl: upstream.baseUrl, redisUrl: withReplica.url }),
  alone: await startTestGateway({ root: root(), upstreamUrl: upstream.baseUrl, redisUrl: alone.url }),
};
const tokens: Record<string, string> = {};
for (const [name, gw] of Object.entries(gateways)) {
  const p = await gw.principal();
  await gw.admin('POST', `/principals/${encodeURIComponent(p.id)}/credits`, { microUSD: 1_000_000_000 });
  tokens[name] = p.token;
}
const results: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const concurrency of [1, 16]) {
    for (const name of round % 2 ? ['alone', 'replica'] : ['replica', 'alone']) {
      const key = `${name} x${concurrency}`;
      (results[key] ??= []).push(...(await run(gateways[name as 'replica' | 'alone'], tokens[name]!, concurrency)));
    }
  }
}
for (const concurrency of [1, 16]) {
  const w = results[`replica x${concurrency}`]!;
  const a = results[`alone x${concurrency}`]!;
  console.log(
    `${concurrency} at a time: p50 ${pct(a, 50).toFixed(2)} -> ${pct(w, 50).toFixed(2)} ms (+${(pct(w, 50) - pct(a, 50)).toFixed(2)}), p99 ${pct(a, 99).toFixed(2)} -> ${pct(w, 99).toFixed(2)} ms (alone -> waiting for a replica), ${w.length} calls each`,
  );
}
await Promise.all(Object.values(gateways).map((g) => g.close()));
await Promise.all([upstream.stop(), replica.stop(), withReplica.stop(), alone.stop()]);
