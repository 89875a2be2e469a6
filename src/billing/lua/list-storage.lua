-- KEYS principal's grants, family prefix: the grants the index lists.
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local g = redis.call('GET', KEYS[2] .. 'bs:' .. id)
  if g then out[#out + 1] = g end
end
return out
