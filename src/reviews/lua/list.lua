-- KEYS day, family prefix  ARGV start, stop
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))) do
  local e = redis.call('GET', KEYS[2] .. 'rv:' .. id)
  if e then out[#out + 1] = e end
end
return {redis.call('ZCARD', KEYS[1]), out}
