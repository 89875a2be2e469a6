-- KEYS op, bill, claim  ARGV target, at. The claim key holds how much of it was settled before; the
-- balance keeps at least what was spent (aiGranted never drops below aiSpent).
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
return {'ok', rec}
