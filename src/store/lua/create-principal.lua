-- KEYS p, ps, po  ARGV doc, rung, aup, [scopeId, scopeJson]...  (after principal.lib.lua)
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'doc', ARGV[1], 'rung', ARGV[2], 'aup', ARGV[3])
redis.call('DEL', KEYS[2], KEYS[3])
for i = 4, #ARGV, 2 do put_scope(KEYS[2], KEYS[3], ARGV[i], ARGV[i + 1]) end
return 1
