-- The records decided in [from, to), oldest first, at most `limit`; an id whose record expired is skipped.
-- KEYS[1] the time index (zset)  KEYS[2] the records' key prefix (the family's, so one slot)
-- ARGV[1] from (epoch ms)  ARGV[2] to (epoch ms, exclusive)  ARGV[3] limit
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '(' .. ARGV[2], 'LIMIT', 0, ARGV[3])
local out = {}
for i = 1, #ids do
  local v = redis.call('GET', KEYS[2] .. ids[i])
  if v then out[#out + 1] = v end
end
return out
