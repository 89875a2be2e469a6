-- KEYS record  ARGV step
local f = redis.call('HMGET', KEYS[1], 'state', 'lastStep')
if f[1] ~= 'active' or tonumber(ARGV[1]) <= tonumber(f[2]) then return 0 end
redis.call('HSET', KEYS[1], 'lastStep', ARGV[1])
return 1
