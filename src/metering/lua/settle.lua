-- The ledger's settle (after hold.lib.lua, src/receipts/lua/log.lib.lua and receipt.lib.lua, and
-- src/jobs/lua/job.lib.lua).
-- KEYS hold, bill, use, r, rd, holds, money prefix[, job, job leases]
-- ARGV the settlement (callId, receiptId, score, charge, freeConsumed, tokConsumed, leaf, mode: 'settle'
--      needs the hold, 'late' stores the receipt alone: plain arguments, which Redis reads for less than it
--      decodes JSON), the receipt JSON[, then the job's closing: update_job's status, owner, retention,
--      jobId, terminal, leaseMs, field/JSON pairs]
-- Answers named fields: outcome 'ok' (with jobClosed when a closing was given), 'dup' (with the receipt
-- stored before: a repeat changes nothing) or 'expired' (the hold was swept: settle again 'late').
local s = {callId = ARGV[1], receiptId = ARGV[2], score = ARGV[3], charge = tonumber(ARGV[4]),
  freeConsumed = tonumber(ARGV[5]), tokConsumed = tonumber(ARGV[6]), leaf = ARGV[7], mode = ARGV[8]}
local prefix = KEYS[7]
local prev = redis.call('GET', KEYS[4])
if prev then
  release_hold(prefix, s.callId)
  return {'outcome', 'dup', 'receipt', prev}
end
if s.mode == 'settle' then
  local h = redis.call('HMGET', KEYS[1], 'pid', 'day', 'micro', 'tok', 'free')
  if not h[1] then return {'outcome', 'expired'} end
  -- The charge may pass the hold (usage above the bound): all of it is spent; the balance may go below zero.
  local tok, free = tonumber(h[4]), tonumber(h[5])
  release_hold(prefix, s.callId, h)
  if s.charge > 0 then redis.call('HINCRBY', KEYS[2], 'aiSpent', s.charge) end
  -- Counted on the day the hold counts on (its own pid and day, as release_hold builds them), whatever day
  -- the caller names: that key exists while the hold counts on it, with its expiry, since the reserve that
  -- held `tok` or `free` created it with one (reserve.lua), which no later write moves. Another day's key
  -- could be made here without one.
  local uk = prefix .. 'use:' .. h[2] .. ':' .. h[1]
  if tok > 0 and s.tokConsumed > 0 then redis.call('HINCRBY', uk, 'tokUsed', s.tokConsumed) end
  if free > 0 and s.freeConsumed > 0 then redis.call('HINCRBY', uk, 'freeUsed', s.freeConsumed) end
end
-- No receipt has this id (read above): put_receipt need not look again.
put_receipt(KEYS[4], KEYS[5], ARGV[9], s.receiptId, s.score, prefix, s.leaf, true)
if #KEYS > 7 then
  local closed = update_job(KEYS[8], KEYS[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14], ARGV[15], ARGV, 16)
  return {'outcome', 'ok', 'jobClosed', closed and 1 or 0}
end
return {'outcome', 'ok'}
