-- KEYS session, family prefix  ARGV hash, now, idleMs
local f = redis.call('HMGET', KEYS[1], 'p', 'm', 's', 'c', 'l', 'e')
if not f[1] then return false end
local now, idle, l, e = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(f[5]), tonumber(f[6])
if now >= e or now - l >= idle then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[2] .. 'sesp:' .. f[1], ARGV[1])
  return false
end
if now > l then
  l = now
  redis.call('HSET', KEYS[1], 'l', tostring(l))
end
redis.call('PEXPIRE', KEYS[1], math.max(1, math.min(e - now, l + idle - now)))
return {f[1], f[2], f[3], f[4], tostring(l), f[6]}
