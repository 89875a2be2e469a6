-- KEYS rd, money prefix: the receipts a day index lists, in its order.
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local r = redis.call('GET', KEYS[2] .. 'r:' .. id)
  if r then out[#out + 1] = r end
end
return out
