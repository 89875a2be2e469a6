/**
 * What a chat call costs in Redis, as seen on the wire (MONITOR): the commands the gateway itself sends for
 * one call (not those its scripts run), for a token's first call and for a call of a token already in use.
 * The budget is five commands in three round trips: the job lookup and the principal's rate-limit hit go
 * out together with the identity fence (the token and its principal are read from the process's cache), the
 * admission decision's record is written in the reservation's script (on one primary), the job is created in
 * the reservation's script and ended in the settlement's. A token's first call on an instance reads the token
 * and its principal before its rate-limit hit and job lookup go out: a few more commands and round trips, once per
 * token and instance.
 *
 * This is a budget the bench reports, not a test: the way the store talks to Redis may change (other
 * scripts, other key names) as long as the count holds. Left out, as no call's own: the job engine's batched
 * writes (running marks, lease renewals), the receipt log signer's ticks, and the "last used" report of a
 * token (sent without waiting, at most once a minute per token).
 */
import { commandsDuring } from '../../test/helpers/redis-monitor.js';

/** The budget: commands the gateway sends to Redis for one call of a token in use. */
export const ROUND_TRIP_BUDGET = { commands: 5, roundTrips: 3 };

export interface RoundTrips {
  /** A token's first call: one line per command, lower-cased and cut to 160 characters. */
  first: string[];
  /** A call of a token already in use. */
  steady: string[];
  budget: typeof ROUND_TRIP_BUDGET;
  /** Whether the steady call stayed within the budget's command count. */
  met: boolean;
}

/** The commands the gateway sent (not those its scripts ran) between two markers, lower-cased. */
export async function sentDuring(redisUrl: string, act: () => Promise<unknown>): Promise<string[]> {
  const lines = await commandsDuring(redisUrl, act);
  return (
    lines
      .map((l) => l.toLowerCase())
      // The engine's batched writes (running marks, lease renewals) are no call's own.
      .filter((l) => !/"pc:jlease" "\d+"/.test(l) || /pc:j:/.test(l))
      .filter((l) => !/"evalsha" "[0-9a-f]{40}" "1" "pc:" /.test(l))
      // Nor are the receipt log signer's ticks (lease, pending leaves, checkpoint): a call's leaf is sequenced
      // inside its settlement script, which names no log key.
      .filter((l) => !/"pc:log:/.test(l))
      // Nor the once-a-minute "last used" report of a token.
      .filter((l) => !/"evalsha" "[0-9a-f]{40}" "1" "pc:tu:/.test(l))
      // The client's own bookkeeping (a timestamp, the client's address) is noise in a report.
      .map((l) => l.replace(/^[\d.]+ \[\d+ [^\]]+\] /, '').slice(0, 160))
  );
}

/**
 * Measures both calls on a gateway whose store is `redisUrl`. `call(token, n)` sends one small chat call;
 * `newToken()` issues a PAT of a fresh principal. A first call of another token warms the scripts up, so no
 * NOSCRIPT retry is counted.
 */
export async function measureRoundTrips(opts: {
  redisUrl: string;
  call: (token: string, n: number) => Promise<unknown>;
  newToken: () => Promise<string>;
}): Promise<RoundTrips> {
  await opts.call(await opts.newToken(), 0);
  const token = await opts.newToken();
  const first = await sentDuring(opts.redisUrl, () => opts.call(token, 1));
  const steady = await sentDuring(opts.redisUrl, () => opts.call(token, 2));
  return { first, steady, budget: ROUND_TRIP_BUDGET, met: steady.length <= ROUND_TRIP_BUDGET.commands };
}
