-- KEYS index, family prefix  ARGV limit: each id's record and its decision fields
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)) do
  local a = redis.call('GET', KEYS[2] .. 'ba:' .. id)
  if a then out[#out + 1] = {a, redis.call('HGETALL', KEYS[2] .. 'bad:' .. id)} end
end
return out
