-- KEYS passkey  ARGV counter, at
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local p = cjson.decode(raw)
local c = tonumber(ARGV[1])
if not (c > p.counter or (c == 0 and p.counter == 0)) then return 0 end
p.counter = c
p.lastUsedAt = ARGV[2]
redis.call('SET', KEYS[1], cjson.encode(p))
return 1
