-- KEYS session, family prefix  ARGV hash
local p = redis.call('HGET', KEYS[1], 'p')
if not p then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2] .. 'sesp:' .. p, ARGV[1])
return 1
