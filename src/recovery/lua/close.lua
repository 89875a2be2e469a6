-- KEYS pending  ARGV id ('' = any)
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
if ARGV[1] ~= '' and cjson.decode(raw).id ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
