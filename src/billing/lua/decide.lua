-- KEYS app, decision  ARGV status, at, note
if not redis.call('GET', KEYS[1]) then return false end
local decided = redis.call('HSETNX', KEYS[2], 'status', ARGV[1])
if decided == 1 then redis.call('HSET', KEYS[2], 'decidedAt', ARGV[2], 'note', ARGV[3]) end
return {decided, redis.call('GET', KEYS[1]), redis.call('HGETALL', KEYS[2])}
