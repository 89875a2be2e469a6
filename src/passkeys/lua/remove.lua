-- KEYS passkey, index  ARGV principalId, id
local raw = redis.call('GET', KEYS[1])
if not raw or cjson.decode(raw).principalId ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('LREM', KEYS[2], 0, ARGV[2])
return 1
