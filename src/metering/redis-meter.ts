/**
 * The meter in Redis, on the store's connection and under its key prefix (so it shares the store's
 * deadlines and fail-closed behaviour: Redis down means 503 `store-unavailable`, nothing admitted). Each
 * operation is one Lua script, so it is atomic and costs one round trip:
 *
 *   reserve  sweep a few expired reservations, check the day's counters and the balance, hold the call;
 *            a rider (the job's creation) runs in the same script when the hold is made
 *   settle   charge the reported usage (all of it, even above the hold), release the hold, store the receipt and sequence its leaf in the receipt log — one
 *            script, hence one AOF entry: with
 *            `appendfsync always` it is on disk before the reply. It first looks for the receipt: a retry
 *            (also of a script whose reply was lost) finds it and changes nothing. A rider (the job's end)
 *            runs in the same script when the settlement applies.
 *
 * Layout (under the store's prefix, beside its keys):
 *   bill:<principal>        hash   aiGranted, aiSpent, aiReserved (integer micro-USD), plan, planSince
 *   use:<day>:<principal>   hash   freeUsed, freeHeld, tokUsed, tokHeld for one UTC day; expires two days
 *                                  after the day ends
 *   hold:<callId>           hash   an open reservation: pid, day, micro, tok, free, billing, exp
 *   holds                   zset   open reservations by expiry (epoch ms, the Redis server's clock): the
 *                                  sweep's index
 *   grant:<operationId>     string the grant applied under that operation id (JSON), kept for good
 *   r:<id>, rd:<day>:<principal>   receipts and their day index, the store's layout (store/redis.ts)
 *   log:size, log:h:0:<chunk>      the receipt's leaf, sequenced in the same script (receipts/log-lua.ts)
 * Integers stay below 2^53, so Lua's doubles hold them exactly; HINCRBY keeps them as integers.
 *
 * Expiry is written and judged on one clock, the Redis server's (`TIME`): a gateway sends how long a hold
 * may stay open, never an end read off its own clock, so an instance whose clock runs ahead cannot release
 * (and so make free) the calls other instances are still running. Only a meter given a clock of its own
 * (`now`, which tests use to cross a day or expire holds without waiting) sends its time instead.
 */
import { chainedCall, chainScripts, luaScript, PUT_RECEIPT_FN, receiptKeys, type LuaScript, type RedisStore } from '../store/redis.js';
import type { Receipt } from '../store/store.js';
import { refusal } from './limits.js';
import {
  consumption,
  dayTtlSeconds,
  quote,
  settlementOf,
  utcDay,
  worstCaseMicroUSD,
  type BillingStatus,
  type DayUsage,
  type ClawbackRequest,
  type ClawbackResult,
  type GrantRecord,
  type GrantRequest,
  type GrantResult,
  type Meter,
  type Reservation,
  type MeterRider,
  type ReserveRequest,
  type ReserveRider,
  type SettleInput,
  type SettleRider,
  type Settlement,
} from './meter.js';
import type { MeterOptions } from './memory-meter.js';

/** Releasing one reservation, and sweeping expired ones: shared by the scripts that do either. */
const RELEASE_FN = `
local function clock_ms(given)
  if given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function release_hold(prefix, id)
  local hk = prefix .. 'hold:' .. id
  local h = redis.call('HMGET', hk, 'pid', 'day', 'micro', 'tok', 'free')
  if h[1] then
    local micro, tok, free = tonumber(h[3]), tonumber(h[4]), tonumber(h[5])
    local uk = prefix .. 'use:' .. h[2] .. ':' .. h[1]
    if micro > 0 then redis.call('HINCRBY', prefix .. 'bill:' .. h[1], 'aiReserved', -micro) end
    if tok > 0 then redis.call('HINCRBY', uk, 'tokHeld', -tok) end
    if free > 0 then redis.call('HINCRBY', uk, 'freeHeld', -free) end
    redis.call('DEL', hk)
  end
  redis.call('ZREM', prefix .. 'holds', id)
  return h[1] ~= false
end
local function sweep(prefix, now, limit)
  local ids = redis.call('ZRANGEBYSCORE', prefix .. 'holds', '-inf', now, 'LIMIT', 0, limit)
  for _, id in ipairs(ids) do release_hold(prefix, id) end
  return #ids
end
`;

// KEYS bill, use, hold, holds
// ARGV prefix, clock, callId, pid, day, freePerDay, freeUnit, rungCounted, tokensPerDay, ceilingPerDay,
//      est, cost, ttlMs, useTtl, sweepLimit
// The rule is limits.ts `decide`, step for step.
const RESERVE = luaScript(`${RELEASE_FN}
local now = clock_ms(ARGV[2])
local exp = now + tonumber(ARGV[13])
sweep(ARGV[1], now, tonumber(ARGV[15]))
local held = redis.call('HMGET', KEYS[3], 'billing', 'micro', 'exp')
if held[1] then return {'held', held[1], tonumber(held[2]), tonumber(held[3])} end
local u = redis.call('HMGET', KEYS[2], 'freeUsed', 'freeHeld', 'tokUsed', 'tokHeld')
local freeCount = tonumber(u[1] or 0) + tonumber(u[2] or 0)
local tokens = tonumber(u[3] or 0) + tonumber(u[4] or 0)
local rung = ARGV[8] == '1'
local est, cost = tonumber(ARGV[11]), tonumber(ARGV[12])
if rung and tokens + est > tonumber(ARGV[10]) then return {'ceiling', tokens} end
local units = 1
if ARGV[7] == 'tokens' then units = est end
local free = freeCount + units <= tonumber(ARGV[6])
if rung and tokens + est > tonumber(ARGV[9]) then free = false end
local micro, freeHold, tokHold = 0, 0, 0
if free then freeHold = units else
  local b = redis.call('HMGET', KEYS[1], 'aiGranted', 'aiSpent', 'aiReserved')
  local granted = tonumber(b[1] or 0)
  local available = granted - tonumber(b[2] or 0) - tonumber(b[3] or 0)
  if available < cost then return {'credits', granted, available, tokens, freeCount} end
  micro = cost
end
if rung then tokHold = est end
if micro > 0 then redis.call('HINCRBY', KEYS[1], 'aiReserved', micro) end
if freeHold > 0 then redis.call('HINCRBY', KEYS[2], 'freeHeld', freeHold) end
if tokHold > 0 then redis.call('HINCRBY', KEYS[2], 'tokHeld', tokHold) end
if freeHold > 0 or tokHold > 0 then redis.call('EXPIRE', KEYS[2], ARGV[14]) end
local billing = 'paid'
if free then billing = 'free' end
redis.call('HSET', KEYS[3], 'pid', ARGV[4], 'day', ARGV[5], 'micro', micro, 'tok', tokHold, 'free', freeHold, 'billing', billing, 'exp', exp)
redis.call('ZADD', KEYS[4], exp, ARGV[3])
return {'ok', billing, micro, exp, ARGV[5]}`);

// KEYS hold, bill, use, r, rd, holds
// ARGV prefix, callId, receiptJson, receiptId, score, charge, freeConsumed, tokConsumed, mode, useTtl, leafHash
// mode 'settle' needs the reservation ('expired' when it is gone); mode 'late' stores the receipt alone.
const SETTLE = luaScript(`${RELEASE_FN}${PUT_RECEIPT_FN}
local prev = redis.call('GET', KEYS[4])
if prev then
  release_hold(ARGV[1], ARGV[2])
  return {'dup', prev}
end
if ARGV[9] == 'settle' then
  local h = redis.call('HMGET', KEYS[1], 'micro', 'tok', 'free')
  if not h[1] then return {'expired'} end
  -- The charge may pass the hold (usage above the bound): all of it is spent; the balance may go below zero.
  local tok, free, charge = tonumber(h[2]), tonumber(h[3]), tonumber(ARGV[6])
  release_hold(ARGV[1], ARGV[2])
  if charge > 0 then redis.call('HINCRBY', KEYS[2], 'aiSpent', charge) end
  if tok > 0 and tonumber(ARGV[8]) > 0 then redis.call('HINCRBY', KEYS[3], 'tokUsed', ARGV[8]) end
  if free > 0 and tonumber(ARGV[7]) > 0 then redis.call('HINCRBY', KEYS[3], 'freeUsed', ARGV[7]) end
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], ARGV[10]) end
end
put_receipt(KEYS[4], KEYS[5], ARGV[3], ARGV[4], ARGV[5], ARGV[1], ARGV[11])
return {'ok'}`);

// KEYS -  ARGV prefix, callId
const RELEASE = luaScript(`${RELEASE_FN}
return release_hold(ARGV[1], ARGV[2]) and 1 or 0`);

// KEYS -  ARGV prefix, clock, limit
const SWEEP = luaScript(`${RELEASE_FN}
return sweep(ARGV[1], clock_ms(ARGV[2]), tonumber(ARGV[3]))`);

// KEYS bill  ARGV prefix, clock. Sweeps first, so `reserved` does not count reservations already expired.
const STATUS = luaScript(`${RELEASE_FN}
sweep(ARGV[1], clock_ms(ARGV[2]), 16)
return redis.call('HMGET', KEYS[1], 'aiGranted', 'aiSpent', 'aiReserved', 'plan')`);

// KEYS use
const USAGE = luaScript(`return redis.call('HMGET', KEYS[1], 'freeUsed', 'freeHeld', 'tokUsed', 'tokHeld')`);

// KEYS grant, bill  ARGV grantJson, microUSD, plan ('' = none), at
const GRANT = luaScript(`
local prev = redis.call('GET', KEYS[1])
if prev then return {'dup', prev} end
if tonumber(ARGV[2]) > 0 then redis.call('HINCRBY', KEYS[2], 'aiGranted', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], 'plan', ARGV[3], 'planSince', ARGV[4]) end
redis.call('SET', KEYS[1], ARGV[1])
return {'ok', ARGV[1]}`);

// KEYS op, bill, claim  ARGV target, at. The claim key holds how much of it was settled before; the
// balance keeps at least what was spent (aiGranted never drops below aiSpent).
const CLAWBACK = luaScript(`
local prev = redis.call('GET', KEYS[1])
if prev then return {'dup', prev} end
local want = tonumber(ARGV[1]) - tonumber(redis.call('GET', KEYS[3]) or 0)
if want < 0 then want = 0 end
local b = redis.call('HMGET', KEYS[2], 'aiGranted', 'aiSpent')
local room = tonumber(b[1] or 0) - tonumber(b[2] or 0)
if room < 0 then room = 0 end
local take = math.min(want, room)
if take > 0 then redis.call('HINCRBY', KEYS[2], 'aiGranted', -take) end
if want > 0 then redis.call('INCRBY', KEYS[3], want) end
local rec = cjson.encode({taken = take, waived = want - take, at = ARGV[2]})
redis.call('SET', KEYS[1], rec)
return {'ok', rec}`);

const GET_ONE = luaScript(`return redis.call('GET', KEYS[1])`);

const int = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export class RedisMeter implements Meter {
  readonly kind = 'redis' as const;
  readonly #store: RedisStore;
  readonly #prefix: string;
  readonly #now: () => number;
  readonly #ownClock: boolean;
  #timer: NodeJS.Timeout | undefined;

  constructor(store: RedisStore, options: MeterOptions) {
    this.#store = store;
    this.#prefix = store.keyPrefix;
    this.#now = options.now ?? Date.now;
    this.#ownClock = options.now !== undefined;
  }

  today(): string {
    return utcDay(this.#now());
  }

  /** The time the scripts judge expiry by: '' (the Redis server's clock) unless the meter was given a clock. */
  #clock(): string {
    return this.#ownClock ? String(this.#now()) : '';
  }

  #bill(pid: string) {
    return `${this.#prefix}bill:${pid}`;
  }
  #use(day: string, pid: string) {
    return `${this.#prefix}use:${day}:${pid}`;
  }
  #hold(callId: string) {
    return `${this.#prefix}hold:${callId}`;
  }

  async reserve(req: ReserveRequest, rider?: ReserveRider): Promise<Reservation> {
    const now = this.#now();
    const day = utcDay(now);
    const cost = worstCaseMicroUSD(req);
    const rung = req.limits.rung;
    const own = {
      keys: [this.#bill(req.principalId), this.#use(day, req.principalId), this.#hold(req.callId), `${this.#prefix}holds`],
      args: [
        this.#prefix,
        this.#clock(),
        req.callId,
        req.principalId,
        day,
        String(req.limits.free.perDay),
        req.limits.free.unit,
        rung ? '1' : '0',
        String(rung?.tokensPerDay ?? 0),
        String(rung?.ceilingPerDay ?? 0),
        String(req.estimatedTokens),
        String(cost),
        String(req.ttlMs),
        String(dayTtlSeconds(day, now)),
        '16',
      ],
    };
    const reply = await this.#withRider('meter.reserve', RESERVE, own, rider);
    const [verdict] = reply;
    if (verdict === 'ceiling') throw refusal(req, cost, day, { kind: 'ceiling', rungTokens: int(reply[1]) });
    if (verdict === 'credits') {
      throw refusal(req, cost, day, { kind: 'credits', granted: int(reply[1]), available: int(reply[2]), rungTokens: int(reply[3]), freeCount: int(reply[4]) });
    }
    if (verdict !== 'ok' && verdict !== 'held') throw new TypeError(`unexpected meter reply: ${String(verdict)}`);
    const billing = reply[1] === 'free' ? 'free' : 'paid';
    return {
      callId: req.callId,
      principalId: req.principalId,
      billing,
      reservedMicroUSD: int(reply[2]),
      reservedTokens: req.estimatedTokens,
      day,
      rates: req.rates,
      freeUnit: billing === 'free' ? req.limits.free.unit : null,
      rungCounted: rung !== null,
      expiresAt: int(reply[3]),
    };
  }

  async #settleScript(
    reservation: Reservation,
    receipt: Receipt,
    s: Settlement,
    input: SettleInput,
    mode: 'settle' | 'late',
    rider: SettleRider | undefined,
  ): Promise<unknown[]> {
    const k = receiptKeys(this.#prefix, receipt);
    const c = consumption(reservation, s, input);
    const own = {
      keys: [this.#hold(reservation.callId), this.#bill(reservation.principalId), this.#use(reservation.day, reservation.principalId), k.receipt, k.index, `${this.#prefix}holds`],
      args: [
        this.#prefix,
        reservation.callId,
        k.json,
        receipt.id,
        k.score,
        String(s.chargedMicroUSD),
        String(c.free),
        String(c.rungTokens),
        mode,
        String(dayTtlSeconds(reservation.day, this.#now())),
        k.leaf,
      ],
    };
    return this.#withRider('meter.settle', SETTLE, own, rider);
  }

  /** Runs one of the meter's scripts, with the rider's script chained after it when there is a rider. */
  async #withRider<T>(operation: string, script: LuaScript, own: { keys: string[]; args: string[] }, rider: MeterRider<T> | undefined): Promise<unknown[]> {
    if (!rider) return (await this.#store.runScript(operation, script, own.keys, own.args)) as unknown[];
    if (!rider.redis) throw new TypeError('the Redis meter takes a rider with a Redis script');
    const both = chainedCall(own, rider.redis);
    const [reply, ridden] = (await this.#store.runScript(operation, chainScripts(script, rider.redis.script), both.keys, both.args)) as [unknown[], unknown];
    if (reply[0] === 'ok') rider.done(ridden);
    return reply;
  }

  async settle(reservation: Reservation, input: SettleInput, build: (s: Settlement) => Receipt, rider?: (s: Settlement) => SettleRider): Promise<Settlement> {
    const s = quote(reservation, input);
    const receipt = { ...build(s), day: reservation.day };
    const reply = await this.#settleScript(reservation, receipt, s, input, 'settle', rider?.(s));
    if (reply[0] === 'dup') return settlementOf(JSON.parse(String(reply[1])) as Receipt, s);
    if (reply[0] === 'ok') return s;
    // The reservation was swept before settlement (the call outlived it): record the call, charge nothing.
    const late: Settlement = { ...s, chargedMicroUSD: 0, note: 'reservation-expired' };
    const lateReceipt = { ...build(late), day: reservation.day };
    const again = await this.#settleScript(reservation, lateReceipt, late, input, 'late', rider?.(late));
    return again[0] === 'dup' ? settlementOf(JSON.parse(String(again[1])) as Receipt, late) : late;
  }

  async release(reservation: Reservation): Promise<void> {
    await this.#store.runScript('meter.release', RELEASE, [], [this.#prefix, reservation.callId]);
  }

  async record(receipt: Receipt): Promise<Receipt> {
    const dated = { ...receipt, day: receipt.day ?? this.today() };
    await this.#store.putReceipt(dated);
    return dated;
  }

  async status(principalId: string): Promise<BillingStatus> {
    const [g, s, r, plan] = (await this.#store.runScript('meter.status', STATUS, [this.#bill(principalId)], [this.#prefix, this.#clock()])) as unknown[];
    const granted = int(g);
    const spent = int(s);
    const reserved = int(r);
    return {
      status: 'connected',
      plan: typeof plan === 'string' ? plan : null,
      balances: [{ scope: 'ai', grantedMicroUSD: granted, spentMicroUSD: spent, reservedMicroUSD: reserved, availableMicroUSD: granted - spent - reserved }],
    };
  }

  async usage(principalId: string, day: string): Promise<DayUsage> {
    const [fu, fh, tu, th] = (await this.#store.runScript('meter.usage', USAGE, [this.#use(day, principalId)], [])) as unknown[];
    return { day, freeUsed: int(fu), freeHeld: int(fh), rungTokensUsed: int(tu), rungTokensHeld: int(th) };
  }

  async grant(req: GrantRequest): Promise<GrantResult> {
    const record: GrantRecord = { ...req, at: new Date(this.#now()).toISOString() };
    const reply = (await this.#store.runScript(
      'meter.grant',
      GRANT,
      [`${this.#prefix}grant:${req.operationId}`, this.#bill(req.principalId)],
      [JSON.stringify(record), String(req.microUSD), req.kind === 'plan' && req.plan ? req.plan : '', record.at],
    )) as unknown[];
    return { applied: reply[0] === 'ok', grant: JSON.parse(String(reply[1])) as GrantRecord };
  }

  async grantOf(operationId: string): Promise<GrantRecord | null> {
    const raw = await this.#store.runScript('meter.grant-of', GET_ONE, [`${this.#prefix}grant:${operationId}`], []);
    if (typeof raw !== 'string') return null;
    const g = JSON.parse(raw) as GrantRecord;
    return g.kind === 'credits' || g.kind === 'plan' ? g : null;
  }

  async clawback(req: ClawbackRequest): Promise<ClawbackResult> {
    const reply = (await this.#store.runScript(
      'meter.clawback',
      CLAWBACK,
      [`${this.#prefix}grant:${req.operationId}`, this.#bill(req.principalId), `${this.#prefix}claw:${req.claimKey}`],
      [String(req.targetMicroUSD), new Date(this.#now()).toISOString()],
    )) as unknown[];
    const r = JSON.parse(String(reply[1])) as { taken?: number; waived?: number };
    return { applied: reply[0] === 'ok', takenMicroUSD: int(r.taken), waivedMicroUSD: int(r.waived) };
  }

  async sweep(limit = 1000): Promise<number> {
    return int(await this.#store.runScript('meter.sweep', SWEEP, [], [this.#prefix, this.#clock(), String(limit)]));
  }

  start(everyMs = 30_000): void {
    this.#timer ??= setInterval(() => void this.sweep().catch(() => undefined), everyMs).unref();
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
