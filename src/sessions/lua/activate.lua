-- KEYS session  ARGV expiresAt, now, idleMs
local f = redis.call('HMGET', KEYS[1], 's', 'l', 'e')
if f[1] ~= 'pending-2fa' then return 0 end
local e, now, idle, l = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(f[2])
if now >= tonumber(f[3]) or now - l >= idle then return 0 end
if now > l then l = now end
redis.call('HSET', KEYS[1], 's', 'active', 'e', ARGV[1], 'l', tostring(l))
redis.call('PEXPIRE', KEYS[1], math.max(1, math.min(e - now, l + idle - now)))
return 1
