-- KEYS session, index, family prefix  ARGV hash, p, m, s, c, l, e, keepMs, indexKeepMs
for _, h in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  if redis.call('EXISTS', KEYS[3] .. 'ses:' .. h) == 0 then redis.call('SREM', KEYS[2], h) end
end
redis.call('HSET', KEYS[1], 'p', ARGV[2], 'm', ARGV[3], 's', ARGV[4], 'c', ARGV[5], 'l', ARGV[6], 'e', ARGV[7])
redis.call('PEXPIRE', KEYS[1], ARGV[8])
redis.call('SADD', KEYS[2], ARGV[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[9]) then redis.call('PEXPIRE', KEYS[2], ARGV[9]) end
return 1
