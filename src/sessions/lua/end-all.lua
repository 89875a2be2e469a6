-- KEYS index, family prefix
local n = 0
for _, h in ipairs(redis.call('SMEMBERS', KEYS[1])) do n = n + redis.call('DEL', KEYS[2] .. 'ses:' .. h) end
redis.call('DEL', KEYS[1])
return n
