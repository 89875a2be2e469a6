-- KEYS pt, identity prefix: each listed token's hash, {doc, revokedAt}.
local out = {}
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  local t = redis.call('HMGET', KEYS[2] .. 't:' .. id, 'doc', 'revokedAt')
  if t[1] then out[#out + 1] = t end
end
return out
