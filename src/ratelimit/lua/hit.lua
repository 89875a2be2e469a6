-- KEYS current, previous  ARGV limit, windowMs, elapsedMs, cost
-- Returns {allowed, current, previous}; the wait is worked out by the caller from the counts (limiter.ts).
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local elapsed = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local prev = tonumber(redis.call('GET', KEYS[2]) or '0')
if prev * (window - elapsed) / window + cur + cost > limit then return {0, cur, prev} end
if cost > 0 then
  cur = redis.call('INCRBY', KEYS[1], cost)
  redis.call('PEXPIRE', KEYS[1], window * 2)
end
return {1, cur, prev}
