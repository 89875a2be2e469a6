-- KEYS failures  ARGV now, windowMs
local f = redis.call('HMGET', KEYS[1], 'n', 'until')
local now = tonumber(ARGV[1])
local n, untilMs = tonumber(f[1]) or 0, tonumber(f[2]) or 0
if untilMs <= now then n = 0; untilMs = now + tonumber(ARGV[2]) end
n = n + 1
redis.call('HSET', KEYS[1], 'n', tostring(n), 'until', tostring(untilMs))
redis.call('PEXPIRE', KEYS[1], math.max(1, untilMs - now))
return n
