/**
 * The admission rule is written in TypeScript (limits.ts `decide`, which the memory ledger runs) and in Lua
 * (lua/admission.lib.lua, which the Redis ledger's reserve script runs), over one definition of its
 * inputs (`Admission`). This holds the two to the same verdict, field for field, over a grid of limits,
 * day counters and balances — edges included (exactly at an allowance, a ceiling, the credits) — by
 * running the Lua function itself on a real redis-server.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createClient } from 'redis';
import { decide, type Admission, type Balance, type DayCounters, type Verdict } from '../../src/metering/limits.js';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.js';

const LIB = readFileSync(new URL('../../src/metering/lua/admission.lib.lua', import.meta.url), 'utf8');
/** Runs the library's `decide` on each case of ARGV[1] and answers each verdict as named fields. */
const RUN = `${LIB}
local out = {}
for _, c in ipairs(cjson.decode(ARGV[1])) do
  local v = decide(c.a, c.day, function() return c.balance end)
  out[#out + 1] = named(v, {'kind', 'billing', 'micro', 'freeHold', 'rungHold', 'rungTokens', 'granted', 'available', 'freeCount'})
end
return out`;

interface Case {
  a: Admission;
  day: DayCounters;
  balance: Balance;
}

function cases(): Case[] {
  const out: Case[] = [];
  const rungs = [undefined, { tokensPerDay: 1000, ceilingPerDay: 1500 }, { tokensPerDay: 0, ceilingPerDay: 0 }];
  for (const freeUnit of ['requests', 'tokens'] as const)
    for (const freePerDay of [0, 1, 500])
      for (const rung of rungs)
        for (const estimatedTokens of [1, 500, 1000])
          for (const [freeUsed, freeHeld] of [
            [0, 0],
            [0, 1],
            [250, 250],
          ] as const)
            for (const [rungTokensUsed, rungTokensHeld] of [
              [0, 0],
              [500, 0],
              [500, 500],
            ] as const)
              for (const balance of [
                { granted: 0, spent: 0, reserved: 0 },
                { granted: 3000, spent: 1000, reserved: 1000 },
                { granted: 100, spent: 150, reserved: 0 },
              ])
                out.push({
                  a: { freePerDay, freeUnit, ...(rung ? { rung } : {}), estimatedTokens, costMicroUSD: estimatedTokens },
                  day: { freeUsed, freeHeld, rungTokensUsed, rungTokensHeld },
                  balance,
                });
  return out;
}

/** A verdict as named fields, as the Lua answers it: undefined fields left out. */
function flat(v: Verdict): Record<string, unknown> {
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined));
}

describe('the admission rule, in TypeScript and in Lua', () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedisServer();
  });
  after(() => server?.stop());

  it('gives the same verdict for every case of the grid', async () => {
    const all = cases();
    const client = createClient({ url: server.url });
    await client.connect();
    try {
      const replies = (await client.eval(RUN, { keys: [], arguments: [JSON.stringify(all)] })) as unknown[][];
      expect(replies).to.have.length(all.length);
      const kinds = new Set<string>();
      all.forEach((c, i) => {
        const reply = replies[i]!;
        const lua: Record<string, unknown> = {};
        for (let j = 0; j + 1 < reply.length; j += 2) lua[String(reply[j])] = reply[j + 1];
        const ts = flat(decide(c.a, c.day, c.balance));
        kinds.add(String(ts['kind']) + String((ts['billing'] as string | undefined) ?? ''));
        expect(lua, JSON.stringify(c)).to.deep.equal(ts);
      });
      // The grid reaches every verdict: free, paid, the ceiling, and short of credits.
      expect([...kinds].sort()).to.deep.equal(['ceiling', 'credits', 'okfree', 'okpaid']);
    } finally {
      await client.close();
    }
  });
});
