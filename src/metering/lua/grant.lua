-- KEYS grant, bill  ARGV grantJson, microUSD, plan ('' = none), at: applied once per operation id.
local prev = redis.call('GET', KEYS[1])
if prev then return {'dup', prev} end
if tonumber(ARGV[2]) > 0 then redis.call('HINCRBY', KEYS[2], 'aiGranted', ARGV[2]) end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], 'plan', ARGV[3], 'planSince', ARGV[4]) end
redis.call('SET', KEYS[1], ARGV[1])
return {'ok', ARGV[1]}
