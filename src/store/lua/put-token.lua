-- KEYS t, th, pt, tv1  ARGV id, doc, principalId, revokedAt ('' = active), format
-- Returns 1, or 0 on an id clash, -1 on a hash clash.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return -1 end
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'principal', ARGV[3])
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'revokedAt', ARGV[4]) end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('RPUSH', KEYS[3], ARGV[1])
if ARGV[5] == 'v1' then redis.call('SADD', KEYS[4], ARGV[1]) end
return 1
