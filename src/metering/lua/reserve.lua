-- The ledger's reserve (after hold.lib.lua, admission.lib.lua, src/jobs/lua/job.lib.lua and
-- src/decisions/lua/put.lib.lua).
-- KEYS bill, use, hold, holds, money prefix[, job, job leases][, decision index, decision record]
-- ARGV the admission (limits.ts `admissionArgs`: freePerDay, freeUnit, estimatedTokens, costMicroUSD, the
--      rung's tokensPerDay and ceilingPerDay or '' and ''), then the hold: callId, principalId, day, ttlMs,
--      useTtl, clock ('' for the server's), dk and da ('' and '' unless a decision record rides: the index of
--      its first key and first argument)[, then the job to open: open_job's doc, status, owner, leaseMs,
--      retention, jobId][, then the decision record: id, JSON, at, retention, now]
-- Plain arguments, not JSON: decoding them cost Redis more than the rest of the script's reading.
-- Stores the admission decision's record first when one rides (whatever the reservation's outcome, and
-- never failing it: a failed record write is answered as decisionFailed), then sweeps a few expired holds,
-- judges the call (decide), and holds it — opening its job in the same write.
-- Answers named fields: kind ('ok', 'held': reserved before, with the hold's day, or a refusal's kind) and
-- its verdict's fields, expiresAt, and when a job was given, jobCreated and job (the live job's fields when one had its id).
-- The day's usage key is given its expiry when this script creates it (every writer that creates it does, so
-- one that exists has one: the expiry is the day's end plus two days, not moved by later calls); the job's
-- lease is stamped on the same `TIME` as the hold.
local a = {freePerDay = tonumber(ARGV[1]), freeUnit = ARGV[2], estimatedTokens = tonumber(ARGV[3]), costMicroUSD = tonumber(ARGV[4])}
if ARGV[5] ~= '' then a.rung = {tokensPerDay = tonumber(ARGV[5]), ceilingPerDay = tonumber(ARGV[6])} end
local h = {callId = ARGV[7], principalId = ARGV[8], day = ARGV[9], ttlMs = tonumber(ARGV[10]), useTtl = ARGV[11],
  clock = ARGV[12], dk = tonumber(ARGV[13]), da = tonumber(ARGV[14])}
local decision_failed = nil
if h.dk then
  local k, g = h.dk, h.da
  if not pcall(put_decision, KEYS[k], KEYS[k + 1], ARGV[g], ARGV[g + 1], ARGV[g + 2], ARGV[g + 3], ARGV[g + 4]) then decision_failed = 1 end
end
local prefix = KEYS[5]
local now = clock_ms(h.clock)
local exp = now + h.ttlMs
sweep(prefix, now, 16)
-- A repeated reserve answers the hold made first, its day included: a retry that reaches the meter after
-- midnight must settle on the day the hold counts on, not on the retry's.
local held = redis.call('HMGET', KEYS[3], 'billing', 'micro', 'exp', 'day')
if held[1] then
  return named({kind = 'held', billing = held[1], micro = tonumber(held[2]), expiresAt = tonumber(held[3]), day = held[4], decisionFailed = decision_failed},
    {'kind', 'billing', 'micro', 'expiresAt', 'day', 'decisionFailed'})
end
local u = redis.call('HMGET', KEYS[2], 'freeUsed', 'freeHeld', 'tokUsed', 'tokHeld')
local fresh_use = not (u[1] or u[2] or u[3] or u[4])
local day = {
  freeUsed = tonumber(u[1] or 0), freeHeld = tonumber(u[2] or 0),
  rungTokensUsed = tonumber(u[3] or 0), rungTokensHeld = tonumber(u[4] or 0),
}
local v = decide(a, day, function()
  local b = redis.call('HMGET', KEYS[1], 'aiGranted', 'aiSpent', 'aiReserved')
  return {granted = tonumber(b[1] or 0), spent = tonumber(b[2] or 0), reserved = tonumber(b[3] or 0)}
end)
v.decisionFailed = decision_failed
if v.kind ~= 'ok' then return named(v, {'kind', 'rungTokens', 'granted', 'available', 'freeCount', 'decisionFailed'}) end
if v.micro > 0 then redis.call('HINCRBY', KEYS[1], 'aiReserved', v.micro) end
if v.freeHold > 0 then redis.call('HINCRBY', KEYS[2], 'freeHeld', v.freeHold) end
if v.rungHold > 0 then redis.call('HINCRBY', KEYS[2], 'tokHeld', v.rungHold) end
if fresh_use and (v.freeHold > 0 or v.rungHold > 0) then redis.call('EXPIRE', KEYS[2], h.useTtl) end
redis.call('HSET', KEYS[3], 'pid', h.principalId, 'day', h.day, 'micro', v.micro, 'tok', v.rungHold, 'free', v.freeHold, 'billing', v.billing, 'exp', exp)
redis.call('ZADD', KEYS[4], exp, h.callId)
v.expiresAt = exp
if (h.dk or #KEYS + 1) > 6 then
  local rsv = {billing = v.billing, micro = v.micro, expiresAt = exp, day = h.day}
  -- The lease is on the server's clock: the hold's `now` when that is the server's too.
  local lease_now = nil
  if h.clock == '' then lease_now = now end
  local opened = open_job(KEYS[6], KEYS[7], ARGV[15], ARGV[16], ARGV[17], ARGV[18], ARGV[19], ARGV[20], rsv, lease_now)
  v.jobCreated, v.job = opened[1], opened[2]
end
return named(v, {'kind', 'billing', 'micro', 'expiresAt', 'jobCreated', 'job', 'decisionFailed'})
