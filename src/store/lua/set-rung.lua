-- KEYS p, ps, po  ARGV rung, aup ('' keeps the recorded consent)  (after principal.lib.lua)
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'rung', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'aup', ARGV[2]) end
return read_principal(KEYS[1], KEYS[2], KEYS[3])
