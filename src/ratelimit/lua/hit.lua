-- KEYS current, previous  ARGV limit, windowMs, elapsedMs, cost
-- Returns {allowed, current, previous}; the wait is worked out by the caller from the counts (limiter.ts).
-- Both windows are read in one MGET (one subject's two keys share a slot). A window's key is given its
-- expiry (two windows) by the hit that creates it, the one whose INCRBY answers its own cost: it is read
-- as the previous window until its second window ends, and no later hit moves that.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local elapsed = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local counts = redis.call('MGET', KEYS[1], KEYS[2])
local cur = tonumber(counts[1] or '0')
local prev = tonumber(counts[2] or '0')
if prev * (window - elapsed) / window + cur + cost > limit then return {0, cur, prev} end
if cost > 0 then
  cur = redis.call('INCRBY', KEYS[1], cost)
  if cur == cost then redis.call('PEXPIRE', KEYS[1], window * 2) end
end
return {1, cur, prev}
