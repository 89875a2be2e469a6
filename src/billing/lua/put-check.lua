-- KEYS checks hash  ARGV kind, json, at
local old = redis.call('HGET', KEYS[1], ARGV[1] .. ':at')
if old and tonumber(old) > tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[1] .. ':at', ARGV[3])
return 1
