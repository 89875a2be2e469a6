-- Stores one decision record once and indexes it by time, trimming the index past the retention.
-- KEYS[1] the time index (zset)  KEYS[2] the record's key
-- ARGV[1] decision id  ARGV[2] record JSON  ARGV[3] at (epoch ms)  ARGV[4] retention (ms)  ARGV[5] now (epoch ms)
if redis.call('SET', KEYS[2], ARGV[2], 'NX', 'PX', ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (tonumber(ARGV[5]) - tonumber(ARGV[4])))
return 1
