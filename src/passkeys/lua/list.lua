-- KEYS index, family prefix
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local p = redis.call('GET', KEYS[2] .. 'pk:' .. id)
  if p then out[#out + 1] = p end
end
return out
