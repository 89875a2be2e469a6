-- The ledger's holds (src/metering/redis-meter.ts has the layout): the clock they are judged on, releasing
-- one, and sweeping the expired. `prefix` is the money prefix, which every ledger script is given in KEYS:
-- a hold names its principal and day, so the keys it releases are built from it, in the money slot.

-- Epoch ms: the Redis server's clock, unless the gateway sent its own (`given`, a test's clock).
local function clock_ms(given)
  if given ~= nil and given ~= '' then return tonumber(given) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Releases the hold `id`. `h`, when the caller has just read it, is the hold's pid, day, micro, tok, free
-- (an HMGET of those fields, in that order), so it is not read twice.
local function release_hold(prefix, id, h)
  local hk = prefix .. 'hold:' .. id
  h = h or redis.call('HMGET', hk, 'pid', 'day', 'micro', 'tok', 'free')
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
